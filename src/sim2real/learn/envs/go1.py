"""``sim2real/Go1Velocity-v0``: the Unitree Go1 (the vendored Menagerie model,
``sim/models/unitree_go1``) on flat ground tracks a commanded base velocity ``(vx, vy, yaw
rate)`` in its own frame, redrawn every ``command_resample_s``; 50 Hz policy.

- action: 12 joint position targets, ``target = default + action_scale * action`` (the home
  keyframe's pose; scale ``tau_max / kp`` per joint: +-1 asks the peak torque), through the
  Go1's motors at every 5 ms substep (:mod:`sim2real.actuators.go1_motors` on
  :mod:`sim2real.actuators.joint_motors`: PD with mjlab's gains; torque-speed envelope
  23.7 N m / 30.1 rad/s for hip and thigh (gear 6), 35.55 N m / 20.06 rad/s for the knee
  (gear 9); rotor 0.000111842 kg m^2 x gear^2 as armature; drive friction), or learned
  actuator networks (``motors.networks``);
- policy frame (the export contract): ``base_ang_vel[0..2]``, ``projected_gravity[0..2]``,
  ``command[0..2]``, ``joint_pos[0..11]`` (minus default), ``joint_vel[0..11]``,
  ``last_action[0..11]``; privileged: base linear velocity and height, foot contacts;
- rewards (per step): velocity tracking (lin xy, yaw), vertical speed, roll/pitch rates, flat
  orientation, torques, joint accelerations, action rate, feet air time, termination; the
  tracking weights legged_gym's, the penalties on motion a tenth of its (a quarter for the
  vertical speed; feet air time half): with its full weights the first iterations' exploration
  noise cost 0.42 a step in penalties for 0.015 of linear tracking, and every trial learned
  to stand still (RESULTS.md, "a walking gait"); terminations: base below
  ``min_base_height_m`` or tilted past ``max_tilt_rad``; success: an episode that lasts
  ``success_hold_s`` (the whole episode: no fall);
- evaluation (``episode_metrics``): falls and the velocity-tracking error per bin of
  ``|command|``, the issue's targets judged (:mod:`sim2real.learn.envs.velocity_metrics`).
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from sim2real.actuators.go1_motors import ACTION_SCALE_RAD, MOTORS
from sim2real.actuators.joint_motors import JointMotorsConfig
from sim2real.learn.envs import legged_terms as lt
from sim2real.learn.envs import terms
from sim2real.learn.envs.legged import LeggedConfig
from sim2real.learn.envs.task import ObsSpec, Task
from sim2real.learn.envs.velocity_metrics import Target, VelocityTracking
from sim2real.learn.randomization import CONFIG_DIR
from sim2real.sim.builtin import MODELS_DIR

ENV_ID = "sim2real/Go1Velocity-v0"
FEET = ("FR", "FL", "RR", "RL")
JOINTS = tuple(f"{f}_{p}_joint" for f in FEET for p in ("hip", "thigh", "calf"))
LEGS = "[FR][LR]_*"
ROWS = [  # (name, target, lower, upper); nominal = what the MJCF holds
    ("ground_friction", "geom.friction:*_foot_collision", 0.05, 3.0),
    ("base_mass_kg", "body.mass:trunk", 1.0, 20.0),
    ("base_com_x_m", "body.com_x:trunk", -0.2, 0.2),
    ("base_com_y_m", "body.com_y:trunk", -0.2, 0.2),
    ("base_com_z_m", "body.com_z:trunk", -0.2, 0.2),
    ("joint_damping_Nms_rad", f"joint.damping:{LEGS}", 0.0, 2.0),
    ("delay_s", "extra.delay_s", 0.0, 0.1),
    ("pos_noise_rad", f"extra.pos_noise:{LEGS}", 0.0, 0.5),
    ("vel_noise_rad_s", f"extra.vel_noise:{LEGS}", 0.0, 5.0),
]

OBS = {
    **{f"base_ang_vel[{k}]": ObsSpec(lt.base_ang_vel(k), "base_ang_vel") for k in range(3)},
    **{f"projected_gravity[{k}]": ObsSpec(lt.projected_gravity(k), "gravity") for k in range(3)},
    **{f"command[{k}]": ObsSpec(terms.command(k), "command") for k in range(3)},
    **{f"joint_pos[{k}]": ObsSpec(lt.joint_pos_rel(k), "joint_pos") for k in range(12)},
    **{f"joint_vel[{k}]": ObsSpec(terms.joint_vel(k), "joint_vel") for k in range(12)},
    **{f"last_action[{k}]": ObsSpec(terms.prev_action(k), "last_action") for k in range(12)},
}
PRIVILEGED = {
    **{f"base_lin_vel[{k}]": ObsSpec(lt.base_lin_vel(k), "base_lin_vel") for k in range(3)},
    "base_height": ObsSpec(lt.base_height),
    **{f"foot_contact[{f}]": ObsSpec(lt.foot_contact(f)) for f in range(4)},
}


class Go1VelocityConfig(LeggedConfig):
    """The Go1 velocity task's config (see :class:`LeggedConfig` and :class:`TaskConfig`)."""

    OBS: ClassVar[tuple[str, ...]] = tuple(OBS)
    SCALES: ClassVar[dict[str, float]] = {  # legged_gym's observation scales
        "base_ang_vel": 0.25, "gravity": 1.0, "command": 1.0, "joint_pos": 1.0,
        "joint_vel": 0.05, "last_action": 1.0, "base_lin_vel": 2.0,
    }  # fmt: skip
    REWARD: ClassVar[dict[str, float]] = {  # legged_gym's tracking, lighter penalties (above)
        "track_lin_vel": 1.0, "track_ang_vel": 0.5, "lin_vel_z": 0.5, "ang_vel_xy": 0.005,
        "orientation": 1.0, "torques": 2e-5, "joint_acc": 2.5e-8, "action_rate": 0.005,
        "feet_air_time": 0.5, "terminated": 2.0,
    }  # fmt: skip
    COMMANDS: ClassVar[dict[str, tuple[float, float]]] = {
        "vx": (-1.0, 1.0), "vy": (-0.5, 0.5), "yaw_rate": (-1.0, 1.0),
    }  # fmt: skip
    model: str = Field("go1", description="the bundled 'go1' scene or an MJCF path")
    motors: JointMotorsConfig = Field(MOTORS, description="the Go1's joint motors")
    action_scale_rad: dict[str, float] = Field(
        ACTION_SCALE_RAD, description="by joint pattern: target = default + this x action [rad]"
    )
    control_dt: float = Field(0.02, gt=0, description="policy step [s] (50 Hz)")
    episode_s: float = Field(20.0, gt=0, description="time limit of an episode [s]")
    success_hold_s: float = Field(20.0, gt=0, description="an episode this long succeeds [s]")
    history: int = Field(1, ge=1, le=32, description="observation frames in the policy's input")
    init_q_rad: float = Field(0.1, ge=0, description="start: joints at default +- this [rad]")
    init_qvel_rad_s: float = Field(0.1, ge=0, description="start: joint speeds in +- this")
    push_duration_s: float = Field(0.2, gt=0, description="how long a push force acts [s]")
    command_resample_s: float = Field(4.0, ge=0, description="commands redrawn this often [s]")
    ang_vel_noise_rad_s: float = Field(0.2, ge=0, description="gyro noise std [rad/s]")
    gravity_noise: float = Field(0.05, ge=0, description="projected gravity noise std [-]")


TASK = Task(
    env_id=ENV_ID,
    config_cls=Go1VelocityConfig,
    joints=JOINTS,
    goal={},
    hinges=(),
    actuated=JOINTS,
    model_rows=ROWS,
    observations=OBS,
    privileged=PRIVILEGED,
    rewards={
        "track_lin_vel": lt.track_lin_vel_xy(0.25),
        "track_ang_vel": lt.track_ang_vel_z(0.25),
        "lin_vel_z": lt.lin_vel_z,
        "ang_vel_xy": lt.ang_vel_xy,
        "orientation": lt.flat_orientation,
        "torques": lt.joint_torques,
        "joint_acc": lt.joint_acc,
        "action_rate": terms.action_rate,
        "feet_air_time": lt.feet_air_time(0.5, 0.1),
        "terminated": terms.terminated,
    },
    terminations={"base_low": lt.base_too_low, "tilted": lt.base_tilted},
    push_joint="floating_base_joint",
    models={"go1": MODELS_DIR / "unitree_go1" / "scene.xml"},
    default_dr=CONFIG_DIR / "go1_velocity.dr.yaml",
    floating_base="floating_base_joint",
    feet=FEET,
    init_key="home",
    episode_metrics=VelocityTracking(
        bins={
            "vx": ((0.0, 0.5), (0.5, 1.0)),
            "vy": ((0.0, 0.25), (0.25, 0.5)),
            "yaw_rate": ((0.0, 0.5), (0.5, 1.0)),
        },
        settle_s=1.0,
        targets=(Target(0.05), Target(0.1, "vx 0.5-1")),  # issue 18: falls, |vx error|
    ),
)
