"""Learners from the field on :class:`sim2real.learn.vec.VecEnv`: Stable-Baselines3's SAC
(:mod:`.sac`) through an SB3 ``VecEnv`` of our batch (:mod:`.sb3_env`), driven one iteration
at a time, and the running statistics our PPO shares (:mod:`.normalize`). (rsl-rl-lib's PPO
was here too, measured against ours in benchmarks/bench_learners.py and removed: it lost.)

A learner here has a small surface: ``iterate()`` runs one collect-and-update
iteration and returns its metrics, ``policy()`` the deterministic observation-to-action map
(normalization inside, actions in [-1, 1]), ``get_state()`` / ``set_state()`` everything
needed to continue exactly."""
