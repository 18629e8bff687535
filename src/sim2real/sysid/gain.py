"""The controller gain of a log (a servo's firmware ``kp`` in its header) and the one a model's
servo gain holds at, so that each log is replayed with its own gain: the model's fitted
physical parameters, the log's controller setting.

A position servo's MuJoCo gain [N m/rad] is proportional to its firmware kp (see the
servo-bam-xl330 MJCF), so a log recorded at another kp is replayed with the model's servo
gains scaled by kp_log / kp_model. A fitted MJCF records the kp of the logs it was fitted on
as a custom numeric (``<custom><numeric name="sim2real_log_kp">``), which plain MuJoCo loads
and ignores."""

from __future__ import annotations

import mujoco
import numpy as np

from sim2real.core.errors import InputError
from sim2real.params.space import ParamSpace
from sim2real.sim.logs import RobotLog
from sim2real.sim.model import SimModel
from sim2real.sysid.evaluate import HorizonError, horizon_error, prediction_errors
from sim2real.sysid.segments import concat_segments

GAIN_FIELD = "kp"
"""The log header field that holds the controller gain."""
NUMERIC = "sim2real_log_kp"
"""Name of the MJCF custom numeric that records the kp a model's servo gains hold at."""


def log_kp(log: RobotLog) -> float | None:
    """The kp the log's header states, else None."""
    value = log.meta.get(GAIN_FIELD)
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    try:
        return float(value)
    except ValueError:
        raise InputError(log.source, GAIN_FIELD, f"not a number: {value!r}") from None


def one_gain(logs: list[RobotLog]) -> float | None:
    """The kp the logs share (None when none states one). Logs fitted together must share it:
    the model holds one gain, a fit across several would average them."""
    gains = [(log, kp) for log in logs if (kp := log_kp(log)) is not None]
    unstated = [log for log in logs if log_kp(log) is None]
    if gains and unstated:  # else the unstated log would be fitted as if at the others' gain
        why = (
            f"not stated, while {gains[0][0].source} states {gains[0][1]:g}: state it in every log"
        )
        raise InputError(unstated[0].source, GAIN_FIELD, why)
    for log, kp in gains[1:]:
        if kp != gains[0][1]:
            why = f"{kp:g} here, {gains[0][1]:g} in {gains[0][0].source}: fit each gain on its own logs"
            raise InputError(log.source, GAIN_FIELD, why)
    return gains[0][1] if gains else None


def model_kp(sim: SimModel) -> float | None:
    """The kp the model's servo gains hold at, as its MJCF records it (the built-in servo's
    and every model ``sysid fit`` writes); None when unknown."""
    i = mujoco.mj_name2id(sim.model, mujoco.mjtObj.mjOBJ_NUMERIC, NUMERIC)
    if i < 0:
        return None
    return float(sim.model.numeric_data[sim.model.numeric_adr[i]])


def record_kp(spec: mujoco.MjSpec, kp: float) -> None:
    """Write into ``spec`` the kp its servo gains hold at (replacing an earlier record)."""
    numeric = spec.numeric(NUMERIC)
    if numeric is None:
        numeric = spec.add_numeric()
        numeric.name = NUMERIC
    numeric.data = [float(kp)]
    numeric.size = 1


def servo_actuators(model: mujoco.MjModel) -> list[int]:
    """Position servos, force = kp (ctrl - q): a fixed gain that the bias mirrors."""
    return [
        a
        for a in range(model.nu)
        if model.actuator_gaintype[a] == mujoco.mjtGain.mjGAIN_FIXED
        and model.actuator_biastype[a] == mujoco.mjtBias.mjBIAS_AFFINE
        and model.actuator_gainprm[a, 0] != 0
        and np.isclose(model.actuator_biasprm[a, 1], -model.actuator_gainprm[a, 0])
    ]


def errors_at_log_gains(
    sim: SimModel,
    space: ParamSpace,
    values: np.ndarray,
    logs: list[RobotLog],
    kp: float | None,
    **kwargs,
) -> dict[float, HorizonError]:
    """:func:`prediction_errors` with each log replayed at its own kp (the servo gains of
    ``sim`` with ``values`` hold at ``kp``), pooled over the logs as if simulated together."""
    groups = _ratio_groups(sim, logs, kp)
    if list(groups) == [1.0]:
        return prediction_errors(sim, space, values, logs, **kwargs)
    parts = []
    for ratio, rows in groups.items():  # every group baked alike: segments of one width
        scaled = _scaled(sim, space, values, ratio)
        group = [logs[i] for i in rows]
        errs = prediction_errors(scaled, ParamSpace(params=[]), np.zeros(0), group, **kwargs)
        parts.append((np.array(rows), errs))
    return _pooled(parts)


def gain_notes(sim: SimModel, logs: list[RobotLog], kp: float | None) -> list[str]:
    """What :func:`errors_at_log_gains` did about the logs' kp, for the summary."""
    if not servo_actuators(sim.model):
        return []
    stated = sorted({k for log in logs if (k := log_kp(log)) is not None})
    unstated = sum(log_kp(log) is None for log in logs)
    notes = []
    if unstated and kp is not None:
        notes.append(f"{unstated} log(s) state no {GAIN_FIELD}: replayed at the model's "
                     f"{GAIN_FIELD} {kp:g}")  # fmt: skip
    if stated and kp is None:
        notes.append(f"the model does not record the {GAIN_FIELD} its servo gain holds at: logs "
                     "replayed with its gain as is (fitted models record it)")  # fmt: skip
    return notes + [
        f"{GAIN_FIELD} {k:g} log(s) replayed with the servo gain x {k / kp:.3g} "
        f"(the model's holds at {GAIN_FIELD} {kp:g}; the torque's droop at high duty is not "
        "modelled: `sim2real actuator fit` models it)"
        for k in stated
        if kp is not None and k != kp
    ]


def _ratio_groups(sim: SimModel, logs: list[RobotLog], kp: float | None) -> dict[float, list[int]]:
    """{kp_log / kp: indices of the logs}; 1 for logs without kp, a model without a known kp
    or without servos."""
    groups: dict[float, list[int]] = {}
    servos = bool(servo_actuators(sim.model))
    for i, log in enumerate(logs):
        k = log_kp(log)
        ratio = k / kp if (servos and k is not None and kp) else 1.0
        groups.setdefault(ratio, []).append(i)
    return groups


def _scaled(sim: SimModel, space: ParamSpace, values: np.ndarray, ratio: float) -> SimModel:
    """``sim`` with ``values`` written in and its servo gains scaled by ``ratio`` (after the
    values, which may set the gain themselves)."""
    model, extras = sim.instantiate(space, values)
    for a in servo_actuators(model):
        model.actuator_gainprm[a, 0] *= ratio
        model.actuator_biasprm[a, 1] *= ratio
    return SimModel(sim.spec, model, sim.source, extras, list(sim.notes))


def _pooled(parts: list[tuple[np.ndarray, dict[float, HorizonError]]]) -> dict[float, HorizonError]:
    """One error per horizon over groups of logs (``rows``: their indices in the full list),
    computed on their segments joined, as if simulated together."""
    out: dict[float, HorizonError] = {}
    for h in sorted({h for _, errs in parts for h in errs}):
        got = [(rows, errs[h]) for rows, errs in parts if h in errs]
        segs = concat_segments([e.segs for _, e in got], [rows for rows, _ in got])
        qpos = np.concatenate([e.qpos_sim for _, e in got])
        out[h] = horizon_error(h, qpos, segs, sum(e.unstable for _, e in got))
    return out
