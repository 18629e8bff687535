"""``sim2real/PendubotSwingup-v0``: the DFKI double pendulum (design A.0, built-in
``double-pendulum-dfki``) as a pendubot: the shoulder is driven (torque limit 6 N m by default),
the elbow is passive (its motor's friction stays). Start hanging down, goal: both links
upright (shoulder at pi, elbow at 0 relative to the upper link).

Same machinery, observation layout and randomization semantics as the single pendulum
(:mod:`sim2real.learn.envs.pendulum`) with two observed joints: a policy frame is ``q1, cos_q1,
sin_q1, qvel1, q2, cos_q2, sin_q2, qvel2, prev_action``. Reward: the tip height (0 hanging, 1
upright) replaces the single pendulum's height term; the velocity penalty is weighted by how
close both joints are to the goal; success: both joints within ``success_band_rad`` of the
goal for ``success_hold_s``.
"""

from __future__ import annotations

import numpy as np
import yaml
from pydantic import Field

from sim2real.learn.envs.pendulum import PendulumSwingupConfig, SwingupEnv, SwingupVec
from sim2real.learn.randomization import randomization_from_dict

ENV_ID = "sim2real/PendubotSwingup-v0"
UPPER_M, LOWER_M = 0.3, 0.2  # link lengths of the design A.0 (upper, lower drawn)

PENDUBOT_ROWS = [
    ("m1_kg", "body.mass:link1", 0.05, 5.0),
    ("I1_com_kg_m2", "body.inertia:link1", 1e-6, 0.1),
    ("m2_kg", "body.mass:link2", 0.05, 5.0),
    ("com2_z_m", "body.com_z:link2", -0.5, -0.01),
    ("I2_com_kg_m2", "body.inertia:link2", 1e-6, 0.1),
    ("armature2_kg_m2", "joint.armature:elbow", 0.0, 0.05),
    ("damping1_Nm_s", "joint.damping:shoulder", 0.0, 1.0),
    ("damping2_Nm_s", "joint.damping:elbow", 0.0, 1.0),
    ("frictionloss1_Nm", "joint.frictionloss:shoulder", 0.0, 2.0),
    ("frictionloss2_Nm", "joint.frictionloss:elbow", 0.0, 2.0),
    ("torque_bias_Nm", "actuator.bias:shoulder", -2.0, 2.0),
    ("actuator_gain", "actuator.gain:shoulder", 0.1, 10.0),
    ("delay_s", "extra.delay_s", 0.0, 0.1),
    ("pos_noise1_rad", "extra.pos_noise:shoulder", 0.0, 0.5),
    ("pos_noise2_rad", "extra.pos_noise:elbow", 0.0, 0.5),
    ("vel_noise1_rad_s", "extra.vel_noise:shoulder", 0.0, 5.0),
    ("vel_noise2_rad_s", "extra.vel_noise:elbow", 0.0, 5.0),
]

_DEFAULT_DR = """
terms:
  - {name: masses, target: "m*_kg", mode: reset, distribution: uniform, range: [0.8, 1.2],
     operation: scale}
  - {name: com, target: com2_z_m, mode: reset, distribution: uniform, range: [0.9, 1.1],
     operation: scale}
  - {name: damping, target: "damping*", mode: reset, distribution: uniform, range: [0.5, 1.5],
     operation: scale}
  - {name: friction, target: "frictionloss*", mode: reset, distribution: uniform,
     range: [0.5, 1.5], operation: scale}
  - {name: gain, target: actuator_gain, mode: reset, distribution: uniform, range: [0.9, 1.1],
     operation: scale}
  - {name: action_delay, target: delay_s, mode: reset, distribution: uniform,
     range: [0.0, 0.02], operation: add}
  - {name: position_noise, target: "pos_noise*", mode: startup, distribution: uniform,
     range: [0.0, 0.005], operation: absolute}
  - {name: velocity_noise, target: "vel_noise*", mode: startup, distribution: uniform,
     range: [0.0, 0.05], operation: absolute}
"""
DEFAULT_DR = randomization_from_dict(yaml.safe_load(_DEFAULT_DR), __file__)
"""Inline: a pendubot default near the single pendulum's (no pushes)."""


class PendubotSwingupConfig(PendulumSwingupConfig):
    """The single pendulum's config with pendubot defaults."""

    model: str = Field("double-pendulum-dfki", description="built-in name or MJCF path")
    torque_limit_Nm: float = Field(
        6.0, gt=0, description="actions in [-1, 1] scale to this shoulder torque [N m]"
    )


class PendubotSwingupVec(SwingupVec):
    """``num_envs`` pendubot swing-up environments."""

    env_id = ENV_ID
    joints = ("shoulder", "elbow")
    goal = (np.pi, 0.0)
    actuated = "shoulder"
    config_cls = PendubotSwingupConfig
    model_rows = PENDUBOT_ROWS
    default_dr = DEFAULT_DR

    def height(self, q: np.ndarray) -> np.ndarray:
        tip = -(UPPER_M * np.cos(q[:, 0]) + LOWER_M * np.cos(q[:, 0] + q[:, 1]))
        return (1.0 + tip / (UPPER_M + LOWER_M)) / 2.0


class PendubotSwingupEnv(SwingupEnv):
    """One pendubot swing-up environment for gymnasium."""

    vec_cls = PendubotSwingupVec
