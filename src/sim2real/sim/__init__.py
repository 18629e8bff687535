"""MuJoCo model wrapper: parameter handles by name, extra per-step terms, batched simulation,
robot logs with column mappings and validation, and the built-in models."""
