"""System identification: multiple-shooting objective, least-squares initializer, CMA-ES fit,
uncertainty, outputs (standalone MJCF, sidecar, parameters, randomization ranges) and report."""
