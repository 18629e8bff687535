"""Torque targets for a learned actuator from the servo bench's inverse dynamics.

The bench logs no torque, so the torque the servo gave is worked out from the motion: with the
horn's measured position ``q(t)``, ``tau = M qdd + bias(q, qd)``, ``M`` the link's inertia
about the hinge plus the rotor's armature, ``bias`` gravity (the known 0.49 kg at 0.1 m), all
read from the bench's MJCF through MuJoCo's ``mj_inverse``, not typed here. The hinge's damping
and friction loss of that MJCF are the servo's own behaviour (back-EMF, gearbox friction): the
network is to learn them, so they are switched off before the inverse dynamics.

Filter: Savitzky-Golay (``scipy.signal.savgol_filter``, cubic over ``window_s``, 65 ms by
default = 13 samples at 5 ms), giving position, velocity and acceleration from one local fit,
so the three agree with each other. It is zero-phase (a symmetric window: no lag between the
torque target and the position error the network sees) and keeps the peaks of the short
trajectory reversals better than a Butterworth + ``filtfilt`` of the same noise reduction.
The encoder's quantum (2 pi / 4096 rad) gives about 0.5 rad/s^2 of acceleration noise with
this window, ~0.004 N m of torque on this bench.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy.signal import savgol_filter

from sim2real.actuators.servo_log import ServoLog
from sim2real.core.errors import InputError
from sim2real.sim.builtin import MODELS_DIR

BENCH_MJCF = MODELS_DIR / "servo-bam-xl330.xml"
BENCH_JOINT = "horn"
BENCH_MODELS = {
    name: MODELS_DIR / f"{name}.xml"
    for name in ("servo-bam-xl330", "go1-hip-bench", "go1-knee-bench")
}
"""The benches by name (a log's ``bench``): the XL330's, and the simulated Go1 motor benches."""


def bench_mjcf(name: str, source=None) -> Path:
    """The MJCF of bench ``name`` (InputError naming the field ``bench`` otherwise)."""
    if name not in BENCH_MODELS:
        raise InputError(
            source, "bench", f"unknown bench {name!r} (have {', '.join(BENCH_MODELS)})"
        )
    return BENCH_MODELS[name]


@dataclass
class FilteredMotion:
    """Zero-phase filtered motion of one log, ``(T,)`` each: position [rad], velocity
    [rad/s], acceleration [rad/s^2], and the inverse-dynamics torque [N m]."""

    q_rad: np.ndarray
    qd_rad_s: np.ndarray
    qdd_rad_s2: np.ndarray
    tau_Nm: np.ndarray


def filtered_motion(log: ServoLog, window_s: float = 0.065, polyorder: int = 3):
    """(q, qd, qdd) of ``log`` from a Savitzky-Golay fit over ``window_s`` (odd sample
    count, at least ``polyorder + 2``)."""
    dt = log.dt_s
    n = max(round(window_s / dt) // 2 * 2 + 1, polyorder + 2 + (polyorder % 2 == 0))
    if n > len(log.q_rad):
        raise InputError(log.path, "entries", f"{len(log.q_rad)} samples, filter needs {n}")
    return tuple(
        savgol_filter(log.q_rad, n, polyorder, deriv=k, delta=dt, mode="interp") for k in range(3)
    )


def _bench_model(mjcf: Path, joint: str, with_armature: bool):
    import mujoco

    model = mujoco.MjModel.from_xml_path(str(mjcf))
    jid = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, joint)
    if jid < 0:
        raise InputError(mjcf, "joint", f"no joint {joint!r}")
    dof = int(model.jnt_dofadr[jid])
    model.dof_damping[:] = 0.0  # the servo's (back-EMF, friction): what is to be learned
    model.dof_frictionloss[:] = 0.0
    if not with_armature:
        model.dof_armature[dof] = 0.0
    return model, dof, int(model.jnt_qposadr[jid])


def bench_armature_kgm2(mjcf: Path = BENCH_MJCF, joint: str = BENCH_JOINT) -> float:
    """The rotor's armature of the bench MJCF [kg m^2]."""
    model, dof, _ = _bench_model(mjcf, joint, True)
    return float(model.dof_armature[dof])


def check_bench(log: ServoLog, mjcf: Path = BENCH_MJCF, joint: str = BENCH_JOINT) -> None:
    """The log's mass and length must be those of the bench MJCF (1 %), else its inverse
    dynamics would be another bench's."""
    import mujoco

    model, _, _ = _bench_model(mjcf, joint, True)
    body = int(model.jnt_bodyid[mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, joint)])
    mass, length = float(model.body_mass[body]), float(np.linalg.norm(model.body_ipos[body]))
    for field, have, want in (("mass", log.mass_kg, mass), ("length", log.length_m, length)):
        if abs(have - want) > 0.01 * want:
            raise InputError(log.path, field, f"{have:g} differs from the bench model's {want:g}")


def inverse_dynamics(
    log: ServoLog,
    *,
    mjcf: Path | None = None,
    joint: str = BENCH_JOINT,
    with_armature: bool = True,
    window_s: float = 0.065,
) -> FilteredMotion:
    """Filtered motion of ``log`` and the joint torque [N m] that produces it on the bench
    ``mjcf`` (default: the log's bench; inertia, armature if ``with_armature``, gravity),
    ``(T,)`` each."""
    import mujoco

    mjcf = mjcf if mjcf is not None else bench_mjcf(log.bench, log.path)
    check_bench(log, mjcf, joint)
    q, qd, qdd = filtered_motion(log, window_s)
    model, dof, qadr = _bench_model(mjcf, joint, with_armature)
    data = mujoco.MjData(model)
    tau = np.empty_like(q)
    for k in range(len(q)):  # ~5 us per sample: 10 k samples in a fraction of a second
        data.qpos[qadr], data.qvel[dof], data.qacc[dof] = q[k], qd[k], qdd[k]
        mujoco.mj_inverse(model, data)
        tau[k] = data.qfrc_inverse[dof]
    return FilteredMotion(q, qd, qdd, tau)
