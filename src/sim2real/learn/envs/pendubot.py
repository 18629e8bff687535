"""``sim2real/PendubotSwingup-v0``: the DFKI double pendulum (design A.0, built-in
``double-pendulum-dfki``) as a pendubot: the shoulder is driven (torque limit 6 N m by default),
the elbow is passive (its motor's friction stays). Start hanging down, goal: both links
upright (shoulder at pi, elbow at 0 relative to the upper link).

The single pendulum's terms with two observed joints: a policy frame is ``q[0], cos_q[0],
sin_q[0], qvel[0], q[1], cos_q[1], sin_q[1], qvel[1], prev_action`` (element k of the robot's
measurements ``q`` and ``qvel``: the names the robot-side runner reads; ``q1``... before). Reward: the tip height (0 hanging, 1 upright)
replaces the single pendulum's height term; the velocity penalty is weighted by how close both
joints are to the goal; success: both joints within ``success_band_rad`` of the goal for
``success_hold_s``. An episode ends early (``terminated``, with a penalty) when a joint
turns faster than ``OVERSPEED_RAD_S``.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from pydantic import Field

from sim2real.learn.envs import terms
from sim2real.learn.envs.task import HINGE_SCALES, ObsSpec, Task, TaskConfig, hinge_terms
from sim2real.learn.randomization import CONFIG_DIR

ENV_ID = "sim2real/PendubotSwingup-v0"
DEFAULT_DR = CONFIG_DIR / "pendubot_swingup.dr.yaml"
JOINTS = ("shoulder", "elbow")
UPPER_M, LOWER_M = 0.3, 0.2  # link lengths of the design A.0 (upper, lower drawn)
OVERSPEED_RAD_S = 50.0
"""An episode ends when a joint turns this fast (a safety stop): without one a policy that
keeps the torque on spins the links up until the 2 ms simulation diverges (seen: returns of
-1e10 within 20 PPO iterations). A passive fall from near upright peaks at 32 rad/s (elbow),
so the stop is above anything the unforced pendulum does."""

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

OBS, PRIVILEGED = hinge_terms(JOINTS)
OBS["prev_action"] = ObsSpec(terms.prev_action(0), "prev_action")


def tip_height(v: terms.StepView) -> np.ndarray:
    """Reads q[:, 0], q[:, 1]: the tip's height mapped to 0 hanging, 1 upright."""
    tip = -(UPPER_M * np.cos(v.q[:, 0]) + LOWER_M * np.cos(v.q[:, 0] + v.q[:, 1]))
    return (1.0 + tip / (UPPER_M + LOWER_M)) / 2.0


class PendubotSwingupConfig(TaskConfig):
    """The pendubot swing-up's config (see :class:`TaskConfig` for the fields)."""

    OBS: ClassVar[tuple[str, ...]] = tuple(OBS)
    SCALES: ClassVar[dict[str, float]] = HINGE_SCALES
    REWARD: ClassVar[dict[str, float]] = {
        "upright": 1.0,
        # 0.01 until issue 17; the runs that learned used 0.003 (its effect alone not isolated)
        "velocity": 0.003,
        "action": 0.01,
        "bonus": 1.0,
        "angle": 0.0,
        "energy": 0.0,  # energy shaping of both links (terms.Energy)
        "terminated": 10.0,  # the safety stop (OVERSPEED_RAD_S)
    }
    model: str = Field("double-pendulum-dfki", description="built-in name, MJCF or URDF path")
    torque_limit_Nm: float = Field(
        6.0, gt=0, description="actions in [-1, 1] scale to this shoulder torque [N m]"
    )


TASK = Task(
    env_id=ENV_ID,
    config_cls=PendubotSwingupConfig,
    joints=JOINTS,
    goal={"shoulder": np.pi, "elbow": 0.0},
    actuated=("shoulder",),
    model_rows=PENDUBOT_ROWS,
    observations=OBS,
    privileged=PRIVILEGED,
    rewards={
        "upright": tip_height,
        "velocity": terms.velocity_near_goal,
        "action": terms.action_sq,
        "bonus": terms.in_band,
        "angle": terms.angle_score,
        "energy": terms.Energy,
        "terminated": terms.terminated,
    },
    terminations={"overspeed": terms.speed_above(OVERSPEED_RAD_S)},
    default_dr=DEFAULT_DR,
)
