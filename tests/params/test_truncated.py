"""The one truncated sampler: bounds hold, rows are redrawn whole, and the truncated prior's
moments are the analytic ones."""

from __future__ import annotations

import numpy as np
import yaml
from scipy import stats

from sim2real.learn.randomization import Term
from sim2real.params.space import Param, ParamSpace, Prior
from sim2real.params.truncated import draw_truncated


def test_truncated_normal_matches_scipy():
    rng = np.random.default_rng(0)
    x = draw_truncated(lambda m: rng.normal(0.0, 1.0, m), 200_000, -0.5, 2.0)
    assert x.min() >= -0.5 and x.max() <= 2.0
    ref = stats.truncnorm(-0.5, 2.0)
    assert abs(x.mean() - ref.mean()) < 0.01
    assert abs(x.std() - ref.std()) < 0.01


def test_rows_are_redrawn_whole_so_correlation_survives():
    rng = np.random.default_rng(1)
    cov = np.array([[1.0, 0.9], [0.9, 1.0]])
    x = draw_truncated(
        lambda m: rng.multivariate_normal([0, 0], cov, m), 50_000, np.array([-1.0, -5.0]), 5.0
    )
    assert (x[:, 0] >= -1.0).all()
    # a column-wise redraw would break the pairs at the cut; whole rows keep them on the ridge
    kept = x[x[:, 0] < -0.9]
    assert len(kept) > 100 and kept[:, 1].mean() < -0.3


def test_prior_and_term_draw_the_same_truncated_law():
    prior = Prior(kind="log_normal", mean=0.2, std=0.5)
    term = Term(
        name="t",
        target="x",
        mode="reset",
        distribution="log_normal",
        range=(0.2, 0.5),
        bounds=(0.1, 0.3),
    )
    a = prior.draw(20_000, np.random.default_rng(2), (0.1, 0.3))
    b = term.draw(20_000, np.random.default_rng(2))
    np.testing.assert_array_equal(a, b)
    assert a.min() >= 0.1 and a.max() <= 0.3


def test_old_prior_spelling_is_read_and_the_new_one_written():
    space = ParamSpace(
        params=[
            Param(
                name="damping",
                target="joint.damping:j",
                nominal=0.1,
                bounds=(0.01, 1.0),
                prior={"kind": "lognormal", "mean": 0.1, "std": 0.3},
            )
        ]
    )
    assert space.params[0].prior.kind == "log_normal"
    written = yaml.safe_load(space.yaml_text())
    assert written["params"][0]["prior"]["kind"] == "log_normal"
