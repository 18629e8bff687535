"""System identification: multiple-shooting residuals, least-squares initializer, bounded least
squares run to convergence, identifiability, uncertainty, outputs (standalone MJCF, sidecar,
parameters, joint randomization) and report."""
