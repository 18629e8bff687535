"""The swing-up environments on the task machinery step as the code before the port did: the
same observations, rewards and physics states on the same parameters, start states and
actions (tests/learn/swingup_reference.py says how the reference was recorded)."""

from __future__ import annotations

import numpy as np
import pytest
from learn.swingup_reference import DATA, SCENARIOS, run


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_steps_as_before_the_port(name):
    ref = np.load(DATA)
    now = run(name)
    for key in ("policy", "privileged", "state"):
        k = f"{name}.{key}"
        assert now[k].shape == ref[k].shape, k
        assert np.array_equal(now[k], ref[k]), (k, np.abs(now[k] - ref[k]).max())
    k = f"{name}.reward"  # a weighted sum in another order: equal to rounding
    assert np.allclose(now[k], ref[k], rtol=1e-6, atol=1e-7), np.abs(now[k] - ref[k]).max()
