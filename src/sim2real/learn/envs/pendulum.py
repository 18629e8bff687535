"""``sim2real/PendulumSwingup-v0``: swing the DFKI torque-limited pendulum up from hanging down
and hold it upright, with its real 1.0 N m torque limit (gravity alone needs about 1 N m at
the horizontal, friction another 0.3 N m: only energy pumping gets it up).

Reward per step (``q`` = 0 hanging down, ``e`` = angle from upright)::

    r = upright * (1 - cos q) / 2            # 0 hanging, 1 upright: smooth, rewards height
        - velocity * qvel^2 * (1 + cos e) / 2 # speed penalised near upright only
        - action * action^2 - action_rate * (action - previous action)^2
        + bonus * [|e| < success_band_rad]
        + angle * (1 - (e / pi)^2) + energy * (energy shaping)   # both 0 here; training adds energy

Success: the (noiseless) pendulum stays within ``success_band_rad`` of upright for
``success_hold_s`` without interruption. Episodes end only by the time limit (``truncated``).
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from pydantic import Field

from sim2real.learn.envs import terms
from sim2real.learn.envs.task import HINGE_SCALES, ObsSpec, Task, TaskConfig, hinge_terms
from sim2real.learn.randomization import CONFIG_DIR

ENV_ID = "sim2real/PendulumSwingup-v0"
DEFAULT_DR = CONFIG_DIR / "pendulum_swingup.dr.yaml"
JOINT = "shoulder"

PENDULUM_ROWS = [
    ("mass_kg", "body.mass:pendulum", 1e-3, 10.0),
    ("com_z_m", "body.com_z:pendulum", -2.0, -0.01),
    ("damping_Nm_s", f"joint.damping:{JOINT}", 0.0, 1.0),
    ("frictionloss_Nm", f"joint.frictionloss:{JOINT}", 0.0, 2.0),
    ("torque_bias_Nm", f"actuator.bias:{JOINT}", -1.0, 1.0),
    ("actuator_gain", f"actuator.gain:{JOINT}", 0.1, 10.0),
    ("delay_s", "extra.delay_s", 0.0, 0.1),
    ("coulomb_Nm", f"extra.coulomb:{JOINT}", 0.0, 2.0),
    ("viscous_Nm_s", f"extra.viscous:{JOINT}", 0.0, 1.0),
    ("pos_noise_rad", f"extra.pos_noise:{JOINT}", 0.0, 0.5),
    ("vel_noise_rad_s", f"extra.vel_noise:{JOINT}", 0.0, 5.0),
]
"""(name, target, lower, upper) of the model parameters; nominal = what the model holds."""

OBS, PRIVILEGED = hinge_terms((JOINT,))
OBS["prev_action"] = ObsSpec(terms.prev_action(0), "prev_action")

REWARD_WEIGHTS = {
    "upright": 1.0,  # height of the tip, 0 hanging to 1 upright
    "velocity": 0.01,  # squared speed near upright
    "action": 0.01,  # squared action
    "action_rate": 0.0,  # squared change of the action since the last step
    "bonus": 1.0,  # per step within the success band
    "angle": 0.0,  # 1 - (e / pi)^2: keeps a pendulum held sideways far below upright
    "energy": 0.0,  # energy shaping: grows with every pump (training settings: 0.5)
}


def height(v: terms.StepView) -> np.ndarray:
    """Reads q[:, 0]: the tip's height, 0 hanging down, 1 upright."""
    return (1.0 - np.cos(v.q[:, 0])) / 2.0


class PendulumSwingupConfig(TaskConfig):
    """The pendulum swing-up's config (see :class:`TaskConfig` for the fields)."""

    OBS: ClassVar[tuple[str, ...]] = tuple(OBS)
    SCALES: ClassVar[dict[str, float]] = HINGE_SCALES
    REWARD: ClassVar[dict[str, float]] = REWARD_WEIGHTS
    model: str = Field("pendulum-dfki", description="built-in name, MJCF or URDF path")


TASK = Task(
    env_id=ENV_ID,
    config_cls=PendulumSwingupConfig,
    joints=(JOINT,),
    goal={JOINT: np.pi},
    actuated=(JOINT,),
    model_rows=PENDULUM_ROWS,
    observations=OBS,
    privileged=PRIVILEGED,
    rewards={
        "upright": height,
        "velocity": terms.velocity_near_goal,
        "action": terms.action_sq,
        "action_rate": terms.action_rate,
        "bonus": terms.in_band,
        "angle": terms.angle_score,
        "energy": terms.Energy,
    },
    default_dr=DEFAULT_DR,
)
