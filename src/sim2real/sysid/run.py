"""``identify``: the library entry behind ``sim2real sysid fit``. Resolves the model, spec and
column mapping (built-in defaults for built-in models), reads and validates the logs, fits,
measures train and hold-out errors (exact model, plain MJCF, and the published reference when
there is one) and returns everything; :meth:`SysidResult.write` writes the outputs."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import yaml

from sim2real.core.atomic import write_text_atomic
from sim2real.core.errors import InputError
from sim2real.params.space import ParamSpace, load_param_space
from sim2real.sim.builtin import BUILTINS, BuiltinModel, builtin_model, resolve_model
from sim2real.sim.logs import RobotLog, read_log, refuse_repeated_logs, resample_log
from sim2real.sim.mapping import LogMapping, load_mapping
from sim2real.sim.model import SimModel, load_sim_model, sim_model_from_xml
from sim2real.sysid.evaluate import HORIZONS_S, HorizonError, prediction_errors, worse_than_still
from sim2real.sysid.fit import FitConfig, FitResult, fit_params
from sim2real.sysid.gain import errors_at_log_gains, gain_notes, model_kp, one_gain
from sim2real.sysid.limits import clipped_torque_notes
from sim2real.sysid.objective import ObjectiveConfig
from sim2real.sysid.outputs import derived_quantities, dr_space, fitted_mjcf
from sim2real.sysid.reference import Reference, reference_for


@dataclass
class SysidResult:
    """What an identification found. Errors are {horizon_s: HorizonError}."""

    model_name: str
    sim: SimModel
    space: ParamSpace
    mapping: LogMapping
    logs: list[RobotLog]
    holdout: list[RobotLog]
    fit: FitResult
    train_errors: dict[float, HorizonError]
    holdout_errors: dict[float, HorizonError]
    plain_errors: dict[float, HorizonError]
    """Errors of the plain MJCF (no sidecar) on the hold-out logs (train logs if none)."""
    reference: Reference | None
    reference_errors: dict[float, HorizonError]
    mjcf_text: str
    sidecar: dict
    approximations: list[str]
    derived: dict[str, float]
    derived_std: dict[str, float]
    config: dict
    seconds: float
    notes: list[str] = field(default_factory=list)

    def summary_lines(self) -> list[str]:
        f = self.fit
        state = "converged" if f.converged else "NOT converged"
        lines = [
            f"fit {self.model_name} on {len(self.logs)} log(s): {f.evaluations} evaluations "
            f"in {f.seconds:.1f} s ({state}), cost {f.cost_nominal:.4g} (nominal) -> {f.cost:.4g}"
        ]
        unidentified = set(f.unidentified)
        for p, v, s in zip(self.space.params, f.values, self.param_std(), strict=True):
            flag = "  unidentified (held nearest the nominal)" if p.name in unidentified else ""
            lines.append(f"  {p.name:24s} {v: .5g} +- {s:.2g}{flag}")
        for k, v in self.derived.items():
            lines.append(f"  {k:24s} {v: .5g} +- {self.derived_std.get(k, 0.0):.2g}")
        if f.identifiability is not None:
            lines += [f"note: {line}" for line in f.identifiability.describe()]
        lines += [f"WARNING: {note} (fit hit its bound)" for note in f.bound_notes()]
        for label, errs in (("train", self.train_errors), ("hold-out", self.holdout_errors)):
            if errs:
                lines.append(f"{label} position RMSE: " + _fmt(errs))
        held = bool(self.holdout_errors)  # judged on the held-out logs where there are any
        errs, what = (self.holdout_errors, "held-out") if held else (self.train_errors, "fitted")
        lines += [f"WARNING: {w}" for w in worse_than_still(errs, f"{what} motion")]
        if self.plain_errors:
            lines.append("plain MJCF: " + _fmt(self.plain_errors))
            cost = self.approximation_cost()
            if cost:
                lines.append("approximation cost (plain - exact): " + ", ".join(
                    f"{h:g} s {d:+.4f} rad" for h, d in cost.items()))  # fmt: skip
        if self.reference and self.reference_errors:
            lines.append(f"{self.reference.label}: " + _fmt(self.reference_errors))
        return lines + [f"note: {note}" for note in self.notes]

    def param_std(self) -> np.ndarray:
        """(P,) 1-sigma per parameter: 0 for fixed ones, inf for unidentified ones."""
        f = self.fit
        std = f.uncertainty.std.copy() if f.uncertainty else np.zeros(len(self.space))
        std[~self.space.free_mask()] = 0.0
        for name in f.unidentified:
            std[self.space.index(name)] = np.inf
        return std

    def dr_space(self) -> ParamSpace:
        """The randomization written as ``dr.yaml`` (see :func:`outputs.dr_space`)."""
        f = self.fit
        null = f.identifiability.null_space if f.identifiability is not None else None
        cov = f.uncertainty.cov_unit if f.uncertainty is not None else None
        return dr_space(self.space, f.values, cov, null)

    def approximation_cost(self) -> dict[float, float]:
        """Plain-MJCF minus exact-model RMSE per horizon, on the logs the plain MJCF was
        evaluated on (hold-out, else train): what leaving the sidecar out costs."""
        exact = self.holdout_errors if self.holdout else self.train_errors
        return {
            h: self.plain_errors[h].rmse_rad - exact[h].rmse_rad
            for h in self.plain_errors
            if h in exact
        }

    def write(self, out_xml: str | Path, report: str | Path | None = None) -> list[Path]:
        """Write FITTED.xml, <stem>.sidecar.yaml, <stem>.params.yaml, <stem>.config.yaml,
        dr.yaml (beside it) and, if asked, the report folder. Returns the paths."""
        out_xml = Path(out_xml)
        stem = out_xml.with_suffix("")
        paths = [out_xml]
        write_text_atomic(out_xml, self.mjcf_text)
        files = {
            Path(f"{stem}.sidecar.yaml"): self.sidecar,
            Path(f"{stem}.params.yaml"): self.params_document(),
            Path(f"{stem}.config.yaml"): self.config,
        }
        for path, doc in files.items():
            write_text_atomic(path, yaml.safe_dump(doc, sort_keys=False))
            paths.append(path)
        dr = out_xml.parent / "dr.yaml"
        self.dr_space().to_yaml(dr)
        paths.append(dr)
        if report is not None:
            from sim2real.sysid.report import write_report

            paths.append(write_report(self, Path(report)))
        return paths

    def params_document(self) -> dict:
        f, unc = self.fit, self.fit.uncertainty
        unidentified = set(f.unidentified)
        params = []
        for j, p in enumerate(self.space.params):
            item = {"name": p.name, "target": p.target, "value": float(f.values[j])}
            item["identified"] = p.free and p.name not in unidentified
            if unc is not None and item["identified"]:
                item["std"] = float(unc.std[j])
                item["ci95"] = [float(x) for x in unc.ci95[j]]
            item["at_bound"] = bool(f.at_bound[j])
            params.append(item)
        doc: dict = {"model": self.model_name, "params": params, "converged": f.converged}
        doc["warnings"] = [f"{note} (fit hit its bound)" for note in f.bound_notes()]
        if f.identifiability is not None:
            doc["unidentified_directions"] = f.identifiability.describe()
        if self.derived:
            doc["derived"] = self.derived
            doc["derived_std"] = self.derived_std
        if unc is not None:
            doc["uncertainty_method"] = unc.method
            doc["covariance"] = unc.cov.tolist()
        doc["errors_rmse_rad"] = {
            name: {f"{h:g}s": e.rmse_rad for h, e in errs.items()}
            for name, errs in (
                ("train", self.train_errors),
                ("holdout", self.holdout_errors),
                ("plain_mjcf", self.plain_errors),
                ("reference", self.reference_errors),
            )
            if errs
        }
        doc["fit"] = {"cost": f.cost, "cost_nominal": f.cost_nominal, "cost_init": f.cost_init,
                      "evaluations": f.evaluations, "seconds": f.seconds, "converged": f.converged,
                      "unstable_evaluations": f.unstable_evaluations,
                      "mujoco_warnings": f.mujoco_warnings, "notes": f.notes}  # fmt: skip
        doc["mjcf_approximations"] = self.approximations
        doc["approximation_cost_rad"] = {f"{h:g}s": d for h, d in self.approximation_cost().items()}
        doc["log_notes"] = {log.source: log.notes for log in self.logs + self.holdout}
        return doc


def _fmt(errs: dict[float, HorizonError]) -> str:
    return ", ".join(
        f"{h:g} s: {e.rmse_rad:.4f} rad ({e.segments} segments)" for h, e in errs.items()
    )


def fit_config_for(
    model: str | Path,
    *,
    segment_s: float | None = None,
    starts: int = 0,
    max_iter: int = 100,
    seed: int = 0,
    bootstrap: int = 500,
) -> FitConfig:
    """The fit settings of ``sysid fit`` for ``model``: its built-in segment length (else
    0.5 s) unless given. The CLI, the demo and the benchmark all use this, so they agree."""
    builtin = builtin_model(str(model))
    seg = segment_s if segment_s is not None else (builtin.segment_s if builtin else 0.5)
    return FitConfig(objective=ObjectiveConfig(segment_s=seg), starts=starts, max_iter=max_iter,
                     seed=seed, bootstrap=bootstrap)  # fmt: skip


def load_logs(paths: list[Path], mapping: LogMapping, dt_s: float) -> list[RobotLog]:
    """Read, validate and resample logs to the model timestep."""
    return [resample_log(read_log(p, mapping), dt_s, mapping.command_resample) for p in paths]


def _resolve_inputs(
    model: str | Path, spec: Path | None, mapping: Path | None
) -> tuple[Path, BuiltinModel | None, ParamSpace, LogMapping, Path]:
    path, builtin = resolve_model(model)
    if spec is None and builtin is None:
        raise InputError("--spec", None, f"a parameter spec is needed for the model file {path}")
    if mapping is None and builtin is None:
        raise InputError("--mapping", None, f"a column mapping is needed for the model {path}")
    spec_path = spec if spec is not None else builtin.spec  # type: ignore[union-attr]
    map_path = mapping if mapping is not None else builtin.mapping  # type: ignore[union-attr]
    return path, builtin, load_param_space(spec_path), load_mapping(map_path), spec_path


def identify(
    model: str | Path,
    logs: list[Path],
    *,
    spec: Path | None = None,
    mapping: Path | None = None,
    holdout: list[Path] | None = None,
    cfg: FitConfig | None = None,
    reference: bool = True,
    progress: Callable[[int, float], None] | None = None,
) -> SysidResult:
    """Identify ``model`` (built-in name, MJCF or URDF path) on ``logs``; see module doc."""
    start = time.perf_counter()
    cfg = cfg or fit_config_for(model)
    path, builtin, space, mp, spec_path = _resolve_inputs(model, spec, mapping)
    sim = load_sim_model(path, drive_joints=list(mp.actuators))
    sim.resolve(space, str(spec_path))  # names checked before any log is read
    for j in mp.joints:
        sim.joint_index(j, "mapping joints")
    for a in mp.actuators:
        sim.actuator_index(a, "mapping actuators")
    dt = float(sim.model.opt.timestep)
    train = load_logs(list(logs), mp, dt)
    # the fitted gain holds at the training logs' kp: hold-out logs are replayed at their own
    kp = one_gain(train) or model_kp(sim)
    held = load_logs(list(holdout or []), mp, dt)
    refuse_repeated_logs(train + held, held_out=len(held))
    fit = fit_params(sim, space, train, cfg, progress=progress)
    sf = cfg.objective.state_filter_s
    train_err = prediction_errors(sim, space, fit.values, train, state_filter_s=sf)
    hold_err = (
        errors_at_log_gains(sim, space, fit.values, held, kp, state_filter_s=sf) if held else {}
    )
    if held and not hold_err:  # else the fit would be reported without its hold-out error
        _no_segment(held, "hold-out")
    ctrl_max = np.zeros(sim.model.nu)
    for log in train + held:
        for k, a in enumerate(log.actuators):
            i = sim.actuator_index(a)
            ctrl_max[i] = max(ctrl_max[i], float(np.abs(log.ctrl[:, k]).max()))
    text, sidecar, approx = fitted_mjcf(sim, space, fit.values, ctrl_max, kp=kp)
    plain = sim_model_from_xml(text, "fitted MJCF")
    empty = ParamSpace(params=[])
    plain_err = errors_at_log_gains(plain, empty, np.zeros(0), held or train, kp,
                                    state_filter_s=sf)  # fmt: skip
    ref = reference_for(builtin.name) if (reference and builtin is not None) else None
    ref_err = (
        prediction_errors(ref.sim, ref.space, ref.values, held or train, state_filter_s=sf)
        if ref is not None
        else {}
    )
    config = {
        "model": str(model),
        "model_file": str(path),
        "spec": str(spec_path),
        "spec_params": space.model_dump(mode="json")["params"],
        "mapping": mp.model_dump(mode="json"),
        "logs": [str(p) for p in logs],
        "holdout": [str(p) for p in holdout or []],
        "fit": cfg.model_dump(mode="json"),
    }
    return SysidResult(
        builtin.name if builtin else str(path), sim, space, mp, train, held, fit, train_err,
        hold_err, plain_err, ref, ref_err, text, sidecar, approx,
        derived_quantities(sim, space, fit.values), _derived_std(sim, space, fit), config,
        time.perf_counter() - start,
        gain_notes(sim, held, kp) + clipped_torque_notes(sim, train + held),
    )  # fmt: skip


@dataclass
class ModelEvaluation:
    """Prediction errors of one model on logs, per horizon."""

    joints: list[str]
    errors: dict[float, HorizonError]
    notes: list[str] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)

    def summary_lines(self) -> list[str]:
        lines = [f"note: {note}" for note in self.notes]
        lines += [f"WARNING: {w}" for w in worse_than_still(self.errors, "logged motion")]
        names = _distinct_names(self.sources) if len(self.sources) > 1 else []
        for h in HORIZONS_S:
            e = self.errors.get(h)
            if e is None:
                lines.append(f"{h:g} s segments: none fit in the logs (too short, gaps or "
                             "torque off)")  # fmt: skip
                continue
            per = ", ".join(
                f"{j} {v:.4f}" for j, v in zip(self.joints, e.per_joint_rad, strict=True)
            )
            lines.append(
                f"{h:g} s segments: position RMSE {e.rmse_rad:.4f} rad ({per}; "
                f"{e.segments} segments, {e.unstable} unstable)"
            )
            if names:  # one bad log hides in the pooled figure
                for i, (rmse, n) in e.rmse_per_log().items():
                    lines.append(f"  {names[i]}: {rmse:.4f} rad ({n} segments)")
        return lines


def evaluate_model(
    model: str,
    logs: list[Path],
    *,
    mapping: Path | None = None,
    builtin_mapping: str | None = None,
    plain: bool = False,
) -> ModelEvaluation:
    """Prediction errors of ``model`` (a built-in name, or an MJCF such as a fitted model,
    with its sidecar unless ``plain``) on ``logs``, read through ``mapping`` (default: the
    built-in model's, or ``builtin_mapping``'s)."""
    path, builtin = resolve_model(model)
    if mapping is None:
        name = builtin_mapping or (builtin.name if builtin else None)
        if name not in BUILTINS:
            if builtin_mapping is not None:
                raise InputError(
                    None,
                    "--builtin-mapping",
                    f"unknown built-in model {builtin_mapping!r}; choose one of "
                    f"{', '.join(sorted(BUILTINS))}",
                )
            raise InputError(None, "--mapping", "give --mapping or --builtin-mapping NAME")
        mapping = BUILTINS[name].mapping
    mp = load_mapping(mapping)
    sim = (
        sim_model_from_xml(path.read_text(), str(path))
        if plain
        else load_sim_model(path, drive_joints=list(mp.actuators))
    )
    robot_logs = load_logs(logs, mp, float(sim.model.opt.timestep))
    kp = model_kp(sim)
    errors = errors_at_log_gains(sim, ParamSpace(params=[]), np.zeros(0), robot_logs, kp)
    if not errors:
        _no_segment(robot_logs, "evaluation")
    return ModelEvaluation(
        list(robot_logs[0].joints),
        errors,
        gain_notes(sim, robot_logs, kp) + clipped_torque_notes(sim, robot_logs),
        [log.source for log in robot_logs],
    )


def _distinct_names(sources: list[str]) -> list[str]:
    """The logs' paths below their common folder (DFKI's runs share file names)."""
    paths = [Path(p).resolve() for p in sources]
    common = Path(os.path.commonpath(paths)) if len(set(paths)) > 1 else paths[0].parent
    return [str(p.relative_to(common)) for p in paths]


def _no_segment(logs: list[RobotLog], what: str) -> None:
    source = logs[0].source if len(logs) == 1 else "--log"
    why = f"no {what} segment fits in the log(s): too short, or torque off throughout?"
    raise InputError(source, None, why)


def _derived_std(sim: SimModel, space: ParamSpace, fit: FitResult) -> dict[str, float]:
    """Std of the derived quantities over the bootstrap samples (at most 200)."""
    if fit.uncertainty is None or sim.model.nv != 1:
        return {}
    rows = [derived_quantities(sim, space, v) for v in fit.uncertainty.samples[:200]]
    return {k: float(np.std([r[k] for r in rows])) for k in rows[0]} if rows else {}
