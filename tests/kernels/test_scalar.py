"""kernels.scalar helpers against NumPy."""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from kernels.scalar import atan2_nonneg


@njit
def _atan2_nonneg_all(y, x, out):
    for i in range(y.shape[0]):
        out[i] = atan2_nonneg(y[i], x[i])


def test_atan2_nonneg_matches_numpy_to_double_precision():
    """Fresh random magnitudes over 30 decades, both orders, and the edges: zeros, equal, around Cephes' switch
    at r = 0.66 and far apart."""
    seed = np.random.SeedSequence().entropy  # fresh inputs each run, reported on failure
    rng = np.random.default_rng(seed)
    y = 10.0 ** rng.uniform(-15, 15, 20_000)
    x = 10.0 ** rng.uniform(-15, 15, 20_000)
    edges = np.array(
        [
            [0.0, 0.0],
            [0.0, 1.0],
            [1.0, 0.0],
            [1.0, 1.0],
            [0.66, 1.0],
            [0.6600001, 1.0],
            [1.0, 0.66],
            [1e-300, 1.0],
            [1.0, 1e-300],
            [3.0, 3.0000001],
            [np.pi, 1.0],
            [1e-310, 1e-310],
            [5e-324, 0.0],
        ]
    )
    y = np.concatenate([y, rng.uniform(0, 1, 1000), edges[:, 0]])
    x = np.concatenate([x, rng.uniform(0, 1, 1000), edges[:, 1]])
    out = np.full_like(y, np.nan)
    _atan2_nonneg_all(y, x, out)
    expected = np.arctan2(y, x)
    np.testing.assert_allclose(out, expected, rtol=1e-15, atol=1e-300, err_msg=f"seed {seed}")
    assert out[-13] == 0.0 and out[-12] == 0.0 and out[-11] == math.pi / 2  # (0, 0), (0, 1), (1, 0)
    assert out[-2] == math.pi / 4 and out[-1] == math.pi / 2  # subnormal inputs keep their ratio
