"""The peer baseline of ``bench_sysid.py``: MuJoCo's own ``mujoco.sysid`` used as its
documentation shows (``ModelSequences`` of measured chunks, ``build_residual_fn`` with its
default residual, ``optimize(optimizer="mujoco")``), on the same logs and the same parameters
as our built-in spec, so its result can be judged with our hold-out error.

What it cannot express is left out and said so: the action delay (no delay parameter) is held
at 0; the torque offset is a modifier on the actuator's bias (its API allows it). Each chunk
starts from the logged position and the logged (raw) velocity, as its ``create_initial_state``
takes them. Its default residual divides each chunk's errors by the norm of each measured
signal: chunks with a signal that is all zero (a servo holding still) are left out, else the
fit returns NaN and stays at the nominal. Needs ``pip install 'mujoco[sysid]'`` (without the extras the module is empty).
"""

from __future__ import annotations

import contextlib
import io
import time
from collections.abc import Callable

import mujoco
import numpy as np

from sim2real.params.space import ParamSpace
from sim2real.sim.logs import RobotLog
from sim2real.sim.model import SimModel


def _modifier(target: str) -> Callable | None:
    """Our target string -> a mujoco.sysid modifier ``(spec, parameter) -> None``."""
    field, _, name = target.partition(":")

    def body(spec, p):
        b = spec.body(name)
        v = float(p.value[0])
        if field == "body.mass":
            b.mass = v
        elif field == "body.com_z":
            b.ipos = [b.ipos[0], b.ipos[1], v]
        elif field == "body.inertia":
            b.inertia = [v, v, v]

    def joint(spec, p):
        j, v = spec.joint(name), float(p.value[0])
        if field == "joint.damping":
            j.damping = [v, *list(j.damping)[1:]]  # MuJoCo 4: a polynomial, [0] is linear
        else:
            setattr(j, field.split(".")[1], v)

    def actuator(spec, p):
        a, v = spec.actuator(name), float(p.value[0])
        if field == "actuator.bias":
            a.biasprm[0] = v
        elif field == "actuator.gain":  # a position servo's bias mirrors its gain
            a.gainprm[0] = v
            a.biasprm[1] = -v
        elif field == "actuator.force_limit":
            a.forcerange = [-v, v]
            a.forcelimited = 1

    if field in ("body.mass", "body.com_z", "body.inertia"):
        return body
    if field in ("joint.damping", "joint.armature", "joint.frictionloss"):
        return joint
    if field in ("actuator.bias", "actuator.gain", "actuator.force_limit"):
        return actuator
    return None


def peer_fit(
    sim: SimModel, space: ParamSpace, logs: list[RobotLog], chunk_s: float
) -> tuple[np.ndarray, float, list[str]]:
    """Fit ``space`` with mujoco.sysid on ``logs`` (resampled to the model timestep) cut into
    non-overlapping chunks of ``chunk_s``. Returns (values (P,), seconds, notes)."""
    from mujoco import sysid

    spec = sim.spec.copy()
    joints = logs[0].joints
    for j in joints:
        spec.add_sensor(type=mujoco.mjtSensor.mjSENS_JOINTPOS, objtype=mujoco.mjtObj.mjOBJ_JOINT,
                        objname=j, name=f"{j}_pos")  # fmt: skip
    for j in joints:
        spec.add_sensor(type=mujoco.mjtSensor.mjSENS_JOINTVEL, objtype=mujoco.mjtObj.mjOBJ_JOINT,
                        objname=j, name=f"{j}_vel")  # fmt: skip
    model = spec.compile()
    params, notes = sysid.ParameterDict(), []
    for p in space.params:
        mod = _modifier(p.target)
        frozen = mod is None or not p.free
        if mod is None:
            notes.append(f"{p.name} ({p.target}) has no mujoco.sysid equivalent: held at 0")
        value = 0.0 if mod is None else p.nominal
        params.add(sysid.Parameter(p.name, value, p.bounds[0], p.bounds[1], frozen=frozen,
                                   modifier=mod))  # fmt: skip
    dt = float(model.opt.timestep)
    L = max(2, round(chunk_s / dt))
    q_adr = [model.jnt_qposadr[model.joint(j).id] for j in joints]
    v_adr = [model.jnt_dofadr[model.joint(j).id] for j in joints]
    acts = [model.actuator(a).id for a in logs[0].actuators]
    names, states, controls, sensors, skipped = [], [], [], [], 0
    for li, log in enumerate(logs):
        for s in range(0, log.time_s.size - L + 1, L):
            if not log.valid[s : s + L].all():
                continue
            data = np.concatenate([log.qpos[s : s + L], log.qvel[s : s + L]], axis=1)
            if not np.linalg.norm(data, axis=0).all():  # its residual divides by these norms
                skipped += 1
                continue
            qpos, qvel = model.qpos0.copy(), np.zeros(model.nv)
            qpos[q_adr], qvel[v_adr] = log.qpos[s], log.qvel[s]
            ctrl = np.zeros((L, model.nu))
            ctrl[:, acts] = log.ctrl[s : s + L]
            t = np.arange(L) * dt
            names.append(f"log{li}_{s}")
            states.append(sysid.create_initial_state(model, qpos, qvel))
            controls.append(sysid.TimeSeries(t, ctrl))
            sensors.append(sysid.TimeSeries.from_names(t, data, model))
    seqs = sysid.ModelSequences("bench", spec, names, states, controls, sensors)
    residual_fn = sysid.build_residual_fn(models_sequences=[seqs])
    t0 = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):  # its optimizer prints every iteration
        opt, _ = sysid.optimize(params, residual_fn, optimizer="mujoco", verbose=False)
    seconds = time.perf_counter() - t0
    values = np.array([float(opt[p.name].value[0]) for p in space.params])
    notes.append(f"{len(names)} chunks of {L * dt:g} s"
                 + (f" ({skipped} left out: a signal all zero, its residual divides by its norm)"
                    if skipped else ""))  # fmt: skip
    return values, seconds, notes
