"""Colour histograms of a part and its surroundings (``tracking.color_histograms``): the cell
of a colour, normalisation, blending over frames, the separation of the two statistics and the
per-pixel posterior, with colours whose cells are known."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sim2real.tracking.color_histograms import EPS, ColorHistograms

RED, BLUE = np.array([[250, 10, 10]], np.uint8), np.array([[10, 10, 250]], np.uint8)


def test_cells_of_colours():
    h = ColorHistograms(16)  # 16 levels per channel: a cell is 16 values of each wide
    assert h.index(np.array([0, 0, 0], np.uint8)) == 0
    # (250, 10, 10) >> 4 = (15, 0, 0): cell 15 * 256
    assert h.index(RED[0]) == 15 * 256
    assert h.index(np.array([255, 255, 255], np.uint8)) == 16**3 - 1
    assert h.index(np.array([[17, 33, 49]], np.uint8)).tolist() == [(1 * 16 + 2) * 16 + 3]
    coarse = ColorHistograms(2)  # one bit per channel
    assert coarse.index(np.array([[127, 128, 255]], np.uint8)).tolist() == [0 * 4 + 1 * 2 + 1]
    with pytest.raises(ValueError, match="power of two"):
        ColorHistograms(12)


def test_histograms_are_normalised_and_replace_the_first_time():
    h = ColorHistograms(16)
    assert not h.ready and h.separation() == 0.0
    fg = np.concatenate([np.repeat(RED, 3, 0), BLUE])  # 3/4 red, 1/4 blue
    h.update(fg, np.repeat(BLUE, 5, 0))
    assert h.ready
    assert h.foreground.sum() == pytest.approx(1.0) and h.background.sum() == pytest.approx(1.0)
    assert h.foreground[h.index(RED[0])] == pytest.approx(0.75)
    assert h.background[h.index(BLUE[0])] == pytest.approx(1.0)
    # 1 - Bhattacharyya: 1 - (sqrt(0.75 * 0) + sqrt(0.25 * 1)) = 0.5
    assert h.separation() == pytest.approx(0.5)


def test_blending_at_a_rate_and_empty_updates_ignored():
    h = ColorHistograms(16)
    h.update(RED, BLUE)
    h.update(BLUE, RED, rate=0.2)  # 80 % old, 20 % new
    assert h.foreground[h.index(RED[0])] == pytest.approx(0.8)
    assert h.foreground[h.index(BLUE[0])] == pytest.approx(0.2)
    before = h.foreground.copy()
    h.update(RED[:0], BLUE)  # nothing seen on the part this frame: keep the statistics
    assert np.array_equal(h.foreground, before)
    h.update(RED, BLUE, rate=None)  # None: replace
    assert h.foreground[h.index(RED[0])] == pytest.approx(1.0)


def test_posterior_and_log_likelihoods():
    h = ColorHistograms(16)
    h.update(
        np.concatenate([np.repeat(RED, 3, 0), BLUE]), np.concatenate([RED, np.repeat(BLUE, 3, 0)])
    )
    # red: p(c | part) = 0.75, p(c | background) = 0.25: posterior 0.75 (equal priors)
    p = h.foreground_probability(np.stack([RED[0], BLUE[0], np.array([0, 255, 0], np.uint8)]))
    assert p[0] == pytest.approx(0.75, abs=1e-5) and p[1] == pytest.approx(0.25, abs=1e-5)
    assert p[2] == pytest.approx(0.5)  # never seen on either side: no evidence
    lf, lb = h.log_likelihoods(h.index(RED))
    assert lf[0] == pytest.approx(math.log(0.75 + EPS)) and lb[0] == pytest.approx(
        math.log(0.25 + EPS)
    )
    # identical statistics cannot tell part from background
    same = ColorHistograms(16)
    same.update(RED, RED)
    assert same.separation() == pytest.approx(0.0, abs=1e-12)
