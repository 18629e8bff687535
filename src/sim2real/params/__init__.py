"""Named parameters with nominal values, bounds, scales and priors (``ParamSpace``): what a
calibration fits and what domain randomization samples, for sensors and dynamics alike."""

from sim2real.params.space import Param, ParamSpace, Prior, load_param_space

__all__ = ["Param", "ParamSpace", "Prior", "load_param_space"]
