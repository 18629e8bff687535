"""Where the real datasets live: ``$SIM2REAL_DATA`` (the folder that holds ``real/``), else
``../shared/data`` beside the repository (or beside the current working directory)."""

from __future__ import annotations

import os
from pathlib import Path

from sim2real.core.errors import InputError

ENV_VAR = "SIM2REAL_DATA"


def _candidates() -> list[Path]:
    repo_root = Path(__file__).resolve().parents[3]  # src/sim2real/core/data.py -> repository
    return [repo_root.parent / "shared" / "data", Path.cwd().parent / "shared" / "data"]


def data_root() -> Path | None:
    """The folder that holds ``real/``: ``$SIM2REAL_DATA`` when set (returned as given, even if
    it does not exist, so a wrong setting is reported rather than silently replaced), else the
    first existing ``../shared/data`` next to the repository or the working directory, else
    None."""
    env = os.environ.get(ENV_VAR, "").strip()
    if env:
        return Path(env).expanduser()
    for candidate in _candidates():
        if candidate.is_dir():
            return candidate.resolve()
    return None


def real_data(*parts: str) -> Path:
    """Path of ``real/<parts...>`` under the data root. Raises ``InputError`` when the data
    root or the requested file is absent, saying to set ``SIM2REAL_DATA``."""
    root = data_root()
    if root is None:
        raise InputError(
            ENV_VAR,
            None,
            f"real data not found: set {ENV_VAR} to the folder that holds real/ "
            "(looked for ../shared/data beside the repository and the working directory)",
        )
    path = root.joinpath("real", *parts)
    if not path.exists():
        raise InputError(
            path,
            None,
            f"not found under the data root {root}; set {ENV_VAR} to the folder that holds real/",
        )
    return path
