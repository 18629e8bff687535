"""Built-in models: an MJCF with documented nominal values, a default parameter spec and the
column mapping of its real data set, under a name usable wherever a model path is."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sim2real.core.errors import InputError

MODELS_DIR = Path(__file__).parent / "models"


@dataclass(frozen=True)
class BuiltinModel:
    name: str
    description: str
    fit_logs: tuple[str, ...]
    """Logs of the real data set the model is identified on, relative to ``real/``."""
    holdout_logs: tuple[str, ...]
    segment_s: float = 0.5
    """Recommended multiple-shooting segment length [s] (longer for chaotic systems, whose
    long-horizon behaviour short segments under-weight)."""

    @property
    def mjcf(self) -> Path:
        return MODELS_DIR / f"{self.name}.xml"

    @property
    def spec(self) -> Path:
        return MODELS_DIR / f"{self.name}.spec.yaml"

    @property
    def mapping(self) -> Path:
        return MODELS_DIR / f"{self.name}.mapping.yaml"


_PD = "pendulum-dfki"
_DP = "double-pendulum-dfki/sys_id"
_SV = "servo-bam-xl330/processed"
# servo: the kp = 200 logs (sin_sin, lift_and_drop, up_and_down; sin_time_square held out)

BUILTINS: dict[str, BuiltinModel] = {
    "pendulum-dfki": BuiltinModel(
        "pendulum-dfki",
        "DFKI torque-limited single pendulum (AK80-6), torque input",
        (f"{_PD}/pd/system_identification/data_measured.csv",),
        tuple(
            f"{_PD}/{c}/data_measured.csv"
            for c in ("energy_shaping", "ddp", "ilqr", "direct_collocation")
        ),
    ),
    "double-pendulum-dfki": BuiltinModel(
        "double-pendulum-dfki",
        "DFKI double pendulum design A.0 (two AK80-6), torque input on both joints",
        tuple(f"{_DP}/trajectory_{i:02d}.csv" for i in range(3)),
        (f"{_DP}/trajectory_03.csv",),
        segment_s=1.0,
    ),
    "servo-bam-xl330": BuiltinModel(
        "servo-bam-xl330",
        "Dynamixel XL330 position servo with 0.49 kg at 0.1 m (BAM bench), goal-position input",
        tuple(f"{_SV}/2026-01-15_10h{s}.json" for s in ("28m42", "28m49", "28m57")),
        (f"{_SV}/2026-01-15_10h29m04.json",),
    ),
}


def builtin_model(name: str) -> BuiltinModel | None:
    return BUILTINS.get(name)


def resolve_model(
    arg: str | Path, *, own: dict[str, Path] | None = None
) -> tuple[Path, BuiltinModel | None]:
    """A built-in name, one of ``own`` (models a task bundles, by name) or a model path ->
    (MJCF/URDF path, the built-in or None); errors name ``--model`` and ``arg``."""
    own = own or {}
    if str(arg) in own:
        return Path(own[str(arg)]), None
    found = BUILTINS.get(str(arg))
    if found is not None:
        return found.mjcf, found
    path = Path(arg)
    if path.is_file():
        return path, None
    import difflib

    names = [*own, *BUILTINS]
    close = difflib.get_close_matches(str(arg), names, n=3, cutoff=0.5)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    raise InputError(
        "--model",
        str(arg),
        f"neither a built-in model ({', '.join(names)}) nor an existing file{hint}",
    )
