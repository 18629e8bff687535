"""Scale-out on Ray (the optional extra ``sim2real[cluster]``): environments sharded over Ray
actors behind the VecEnv protocol (:mod:`.sharded`), jobs such as the seeds of a sweep as Ray
tasks or locally (:mod:`sim2real.core.ray_jobs`), and joining a cluster with clear errors
(:mod:`sim2real.core.ray_cluster`; both in core, so that detect uses them too).
Importing this package does not import ``ray``."""
