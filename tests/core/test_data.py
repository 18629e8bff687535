from __future__ import annotations

from pathlib import Path

import pytest

from sim2real.core import data
from sim2real.core.errors import InputError


def test_env_var_wins(tmp_path, monkeypatch):
    (tmp_path / "real" / "kind").mkdir(parents=True)
    monkeypatch.setenv("SIM2REAL_DATA", str(tmp_path))
    assert data.data_root() == tmp_path
    assert data.real_data("kind") == tmp_path / "real" / "kind"


def test_missing_file_under_root_says_to_set_env(tmp_path, monkeypatch):
    monkeypatch.setenv("SIM2REAL_DATA", str(tmp_path))
    with pytest.raises(InputError, match="SIM2REAL_DATA") as err:
        data.real_data("nope", "file.png")
    assert "nope" in str(err.value)


def test_no_root_at_all(monkeypatch, tmp_path):
    monkeypatch.delenv("SIM2REAL_DATA", raising=False)
    monkeypatch.setattr(data, "_candidates", lambda: [tmp_path / "absent"])
    assert data.data_root() is None
    with pytest.raises(InputError, match="set SIM2REAL_DATA"):
        data.real_data()


def test_default_is_shared_data_beside_repository(monkeypatch):
    monkeypatch.delenv("SIM2REAL_DATA", raising=False)
    repo = Path(data.__file__).resolve().parents[3]
    expected = repo.parent / "shared" / "data"
    if not expected.is_dir():
        pytest.skip(f"{expected} absent (real data lives elsewhere here)")
    assert data.data_root() == expected.resolve()
    assert (data.data_root() / "real").is_dir()


def test_fixture_points_at_real(real_data):
    assert real_data.name == "real"
    assert (real_data / "depth-open3d" / "TUM_depth.png").is_file()
