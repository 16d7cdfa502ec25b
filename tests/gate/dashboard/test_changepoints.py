"""Change points: the chosen detector on series with known steps (``tools/changepoints_bench.py`` chose it)."""

from __future__ import annotations

import numpy as np
import pytest

from gate.stats import changepoints


@pytest.mark.parametrize("seed", range(5))
def test_a_ten_percent_step_in_two_percent_noise_is_found_where_it_is(seed):
    rng = np.random.default_rng(seed)
    values = np.exp(rng.normal(0, 0.02, 80))
    at = int(rng.integers(10, 70))
    values[at:] *= 1.10
    [step] = changepoints.detect(values)
    assert abs(step.index - at) <= 1
    assert 0.07 < step.change < 0.13


@pytest.mark.parametrize("seed", range(5))
def test_flat_noise_with_outliers_has_no_step(seed):
    rng = np.random.default_rng(100 + seed)
    values = np.exp(rng.normal(0, 0.02, 80))
    values[rng.integers(0, 80, 3)] *= 1.5  # single wild points are not steps
    assert changepoints.detect(values) == []


def test_short_or_bad_series_have_no_steps():
    assert changepoints.detect([1.0, 2.0, 1.0]) == []
    assert changepoints.detect([1.0, float("nan"), 1.0, 1.0, 2.0, 2.0]) == []
