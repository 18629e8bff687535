"""The dynamics demo: a short real identification and its overlay picture."""

import pytest
from cli_helpers import figures_drawn

from sim2real.sysid.demo import run_dynamics_demo


@pytest.mark.slow
def test_dynamics_demo_writes_the_overlay(real_data, tmp_path, figure_log):
    sections = run_dynamics_demo(tmp_path, quiet=True)
    assert len(sections) == 1 and sections[0].images == ["dynamics_overlay.png"]
    overlay = figures_drawn(figure_log)["dynamics_overlay.png"]["axes"][0]
    measured = overlay["lines"][0]
    assert measured["label"] == "measured" and overlay["ylabel"] == "shoulder [rad]"
    labels = [line["label"] for line in overlay["lines"]]
    ours = overlay["lines"][labels.index("simulated (fit)")]
    assert any(label.startswith("published") for label in labels)  # the peer on the same plot
    # our model, simulated from the log's state, stays within the measured swing
    assert measured["ymin"] - 0.3 <= ours["ymin"] and ours["ymax"] <= measured["ymax"] + 0.3
    rows = dict(sections[0].table)
    ours, published = (float(x.split()[1]) for x in rows["0.5 s segments"].split(", "))
    assert ours < published
