"""The dynamics demo: a short real identification and its overlay picture."""

import pytest

from sim2real.sysid.demo import run_dynamics_demo


@pytest.mark.slow
def test_dynamics_demo_writes_the_overlay(real_data, tmp_path):
    sections = run_dynamics_demo(tmp_path, quiet=True)
    assert len(sections) == 1 and sections[0].images == ["dynamics_overlay.png"]
    assert (tmp_path / "dynamics_overlay.png").stat().st_size > 10_000
    rows = dict(sections[0].table)
    ours, published = (float(x.split()[1]) for x in rows["0.5 s segments"].split(", "))
    assert ours < published
