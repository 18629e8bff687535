"""Robot-side runner of an exported policy, from ``policy.onnx`` and ``policy.json`` alone.

This is what a process on the robot does at every control tick: take the raw measurements
(``q`` in rad, ``qvel`` in rad/s, as arrays over joints or scalars), build one observation frame
as listed in ``policy.json`` (``q`` wrapped to [-pi, pi), ``cos_q`` and ``sin_q`` computed from
the measured ``q``, ``prev_action`` the runner's own last action, zero after ``reset``; any other
term is read from the measurement under its name), multiply each value by its scale, stack the
last ``history`` frames oldest first (the first frame after a reset fills the whole history),
run the ONNX graph and multiply the action by ``action_limit`` for the torque.

It imports numpy and onnxruntime only (no torch, no MuJoCo, no environment code; of this
package, only the standard-library error type and JSON reader of ``sim2real.core``), so it can
be copied onto a robot computer with those two small files. A term name ``base[i]`` takes element ``i`` of the
measurement ``base`` (multi-joint robots).

A legged policy (``policy.json`` with ``joint_names``, ``default_joint_pos``, ``action_scale``,
``kp``, ``kd``) reads the measurements ``base_ang_vel`` (rad/s, body frame),
``projected_gravity`` (unit vector, body frame), ``command`` (vx, vy, yaw rate), ``joint_pos``
(rad, absolute: the runner subtracts the default) and ``joint_vel`` (rad/s), joints in the order
of ``joint_names``; ``last_action`` is the runner's own; :meth:`DeployedPolicy.joint_targets`
gives ``default_joint_pos + action_scale * action`` for the drivers' PD.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import numpy as np

from sim2real.core.errors import InputError
from sim2real.core.json_io import read_json

_TERM_NAME = re.compile(r"^(?P<base>[A-Za-z_][A-Za-z0-9_]*)(?:\[(?P<index>\d+)\])?$")


def _wrap(q: float) -> float:
    return (q + math.pi) % (2.0 * math.pi) - math.pi


class DeployedPolicy:
    """An exported policy ready to run: ``act(measurement) -> action`` in [-1, 1]."""

    def __init__(self, folder: str | Path, joint_names: list[str] | None = None) -> None:
        """``joint_names``: the robot's joints, in its order; a legged policy of other joints
        (another robot) is refused (InputError naming ``joint_names``)."""
        import onnxruntime as ort

        folder = Path(folder)
        json_path = folder / "policy.json"
        onnx_path = folder / "policy.onnx"
        if not json_path.exists() and (folder / "policy.pt").is_file():  # what `train` writes
            why = f"a training run, not an export: run `sim2real policy export {folder} --out DIR` first"
            raise InputError(folder, None, why)
        spec = _read_spec(json_path)
        self.env: str = spec["env"]
        self.control_dt: float = float(spec["control_dt"])
        self.action_limit = np.asarray(spec["action_limit"], dtype=np.float64)
        self.history: int = int(spec["history"])
        self.term_names = [t["name"] for t in spec["obs_terms"]]
        self.scales = np.array([float(t["scale"]) for t in spec["obs_terms"]], dtype=np.float64)
        self._terms = [_parse_term(json_path, i, n) for i, n in enumerate(self.term_names)]
        self._sizes: dict[str, int] = {}  # measurement -> how many values this robot gives
        for _, base, index in self._terms:
            if (source := _measured_source(base)) is not None:
                self._sizes[source] = max(self._sizes.get(source, 0), index + 1)
        self.joint_names: list[str] | None = spec.get("joint_names")
        legged = [np.asarray(spec.get(f, []), dtype=np.float64) for f in _LEGGED[1:]]
        self.default_joint_pos, self.action_scale, self.kp, self.kd = legged
        if joint_names is not None and self.joint_names != list(joint_names):
            raise InputError(
                json_path,
                "joint_names",
                f"the policy drives {_names(self.joint_names)}, the robot has "
                f"{_names(joint_names)}: a policy of another robot",
            )
        obs_dim = self.history * len(self.term_names)
        if not onnx_path.is_file():
            raise InputError(onnx_path, None, "missing (export writes it beside policy.json)")
        try:
            options = ort.SessionOptions()
            options.intra_op_num_threads = 1
            self._session = ort.InferenceSession(
                str(onnx_path), options, providers=["CPUExecutionProvider"]
            )
        except Exception as exc:
            raise InputError(onnx_path, None, f"not a readable ONNX model ({exc})") from exc
        inputs, outputs = self._session.get_inputs(), self._session.get_outputs()
        if [i.name for i in inputs] != ["obs"] or [o.name for o in outputs] != ["action"]:
            raise InputError(onnx_path, None, "expected one input 'obs' and one output 'action'")
        onnx_obs_dim = inputs[0].shape[-1]
        if onnx_obs_dim != obs_dim:
            raise InputError(
                json_path,
                "obs_terms",
                f"history {self.history} x {len(self.term_names)} terms = {obs_dim} values, "
                f"but the ONNX input 'obs' takes {onnx_obs_dim}",
            )
        onnx_action_dim = outputs[0].shape[-1]
        if onnx_action_dim != len(self.action_limit):
            raise InputError(
                json_path,
                "action_limit",
                f"{len(self.action_limit)} actuators, but the ONNX output 'action' has "
                f"{onnx_action_dim}",
            )
        if "obs_dim" in spec and spec["obs_dim"] != obs_dim:
            raise InputError(
                json_path, "obs_dim", f"{spec['obs_dim']} != history x obs_terms = {obs_dim}"
            )
        self.obs_dim = obs_dim
        self.action_dim = len(self.action_limit)
        self.reset()

    def reset(self) -> None:
        """Start a new episode: empty history, previous action zero."""
        self._frames: np.ndarray | None = None
        self.prev_action = np.zeros(self.action_dim, dtype=np.float32)

    def frame(self, measurement: dict[str, Any]) -> np.ndarray:
        """One observation frame (F,) float32 = raw * scale, from raw measurements."""
        values = {k: _measured(k, v) for k, v in measurement.items() if k in self._sizes}
        for source, size in self._sizes.items():  # a robot's measurement, or another robot's?
            if source in values and values[source].size != size:
                why = f"{values[source].size} values, the policy's robot has {size}"
                raise InputError("measurement", source, why)
        raw = np.empty(len(self._terms))
        for k, (name, base, index) in enumerate(self._terms):
            raw[k] = self._raw_term(values, name, base, index)
        return (raw * self.scales).astype(np.float32)

    def observation(self, measurement: dict[str, Any]) -> np.ndarray:
        """Push a frame into the history; (D,) float32, frames oldest first."""
        frame = self.frame(measurement)
        if self._frames is None:
            self._frames = np.repeat(frame[None], self.history, axis=0)
        else:
            self._frames = np.concatenate([self._frames[1:], frame[None]], axis=0)
        return self._frames.reshape(-1)

    def act(self, measurement: dict[str, Any]) -> np.ndarray:
        """Raw measurements of this tick -> action (A,) float32 in [-1, 1]."""
        obs = self.observation(measurement)
        (action,) = self._session.run(["action"], {"obs": obs[None]})
        self.prev_action = np.asarray(action[0], dtype=np.float32)
        return self.prev_action.copy()

    def joint_targets(self, measurement: dict[str, Any]) -> np.ndarray:
        """A legged policy's joint position targets (A,) [rad]: default + scale * action."""
        if self.joint_names is None:
            raise InputError("policy.json", "joint_names", "not a legged policy (no joint targets)")
        return self.default_joint_pos + self.action_scale * self.act(measurement)

    def torque(self, measurement: dict[str, Any]) -> np.ndarray:
        """The torque to apply (A,), N·m: ``act(measurement) * action_limit`` (a legged
        policy's actions are joint targets: :meth:`joint_targets`)."""
        if self.joint_names is not None:
            raise InputError("policy.json", "joint_names", "a legged policy: use joint_targets")
        return self.act(measurement) * self.action_limit

    def _raw_term(self, values: dict[str, np.ndarray], name: str, base: str, index: int) -> float:
        source = _measured_source(base)
        if source is None:
            return float(self.prev_action[index])
        if source not in values:
            raise InputError("measurement", source, f"missing (needed for the term {name!r})")
        if index >= values[source].size:
            raise InputError("measurement", source, f"has no element {index} (term {name!r})")
        x = float(values[source][index])
        if base == "q":
            return _wrap(x)
        if base == "cos_q":
            return math.cos(x)
        if base == "sin_q":
            return math.sin(x)
        if base == "joint_pos" and self.joint_names is not None:
            return x - float(self.default_joint_pos[index])
        return x


_LEGGED = ("joint_names", "default_joint_pos", "action_scale", "kp", "kd")


def _measured_source(base: str) -> str | None:
    """The measurement a term reads (cos_q and sin_q read q); None: the runner's own previous
    action."""
    if base in ("prev_action", "last_action"):
        return None
    return {"cos_q": "q", "sin_q": "q"}.get(base, base)


def _measured(name: str, value: Any) -> np.ndarray:
    """A measurement as a flat float array; never a NaN into the policy (a torque follows)."""
    try:
        x = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError("measurement", name, f"expected numbers, got {value!r}") from None
    if x.ndim > 1:
        raise InputError("measurement", name, f"expected a number or a list, got shape {x.shape}")
    if not np.isfinite(x).all():
        raise InputError("measurement", name, "not finite (NaN or inf): no action computed")
    return np.atleast_1d(x)


def _names(names: list[str] | None) -> str:
    if not names:
        return "no named joints"
    return ", ".join(names[:3]) + (f"... ({len(names)})" if len(names) > 3 else "")


def _check_legged(path: Path, spec: dict[str, Any], n: int) -> None:
    """The legged fields: all or none; each a list of ``n`` (names, or finite numbers)."""
    given = [f for f in _LEGGED if f in spec]
    if not given:
        return
    for f in _LEGGED:
        if f not in spec:
            raise InputError(path, f, f"missing (a legged policy has {', '.join(_LEGGED)})")
        v = spec[f]
        ok = isinstance(v, list) and len(v) == n
        ok = ok and all(isinstance(x, str) if f == "joint_names" else _is_number(x) for x in v)
        if not ok:
            kind = "names" if f == "joint_names" else "finite numbers"
            raise InputError(path, f, f"must be a list of {n} {kind} (one per action)")


def _parse_term(json_path: Path, i: int, name: str) -> tuple[str, str, int]:
    match = _TERM_NAME.match(name)
    if match is None:
        raise InputError(json_path, f"obs_terms[{i}].name", f"{name!r} is not 'name' or 'name[i]'")
    return name, match["base"], int(match["index"] or 0)


def _read_spec(path: Path) -> dict[str, Any]:
    spec = read_json(path)
    if not isinstance(spec, dict):
        raise InputError(path, None, "expected a JSON object")

    def need(field: str, ok: bool, what: str) -> None:
        if not ok:
            raise InputError(path, field, f"must be {what} (got {spec.get(field)!r})")

    for field in ("env", "control_dt", "action_limit", "history", "obs_terms"):
        if field not in spec:
            raise InputError(path, field, "missing")
    need("env", isinstance(spec["env"], str), "a string")
    need("control_dt", _is_number(spec["control_dt"]) and spec["control_dt"] > 0, "a number > 0")
    limits = spec["action_limit"]
    need(
        "action_limit",
        isinstance(limits, list)
        and len(limits) > 0
        and all(_is_number(x) and x > 0 for x in limits),
        "a non-empty list of torques > 0",
    )
    history = spec["history"]
    need(
        "history",
        isinstance(history, int) and not isinstance(history, bool) and history >= 1,
        "an integer >= 1",
    )
    terms = spec["obs_terms"]
    need("obs_terms", isinstance(terms, list) and len(terms) > 0, "a non-empty list")
    for i, term in enumerate(terms):
        if not (isinstance(term, dict) and isinstance(term.get("name"), str)):
            raise InputError(path, f"obs_terms[{i}]", 'must be {"name": str, "scale": number}')
        if not _is_number(term.get("scale")):
            raise InputError(path, f"obs_terms[{i}].scale", "must be a finite number")
    _check_legged(path, spec, len(limits))
    return spec


def _is_number(x: Any) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x)
