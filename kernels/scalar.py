"""Scalar @njit helpers shared by the fused kernels (hand-written and generated), defined once."""

from __future__ import annotations

import math

import numpy as np
from numba import njit

TWO_PI = 2.0 * math.pi


@njit(inline="always", fastmath={"nsz", "arcp", "contract", "reassoc"})
def has_nan(row):
    """NaN anywhere in the row. A vectorised sum screens (it is NaN whenever an element is, and otherwise
    only when it holds both +inf and -inf); the exact element test runs only then."""
    total = 0.0
    for j in range(row.shape[0]):
        total += row[j]
    if not math.isnan(total):
        return False
    for j in range(row.shape[0]):  # noqa: SIM110 - a plain loop is what Numba compiles well
        if math.isnan(row[j]):
            return True
    return False


@njit(inline="always")
def swing_height(phi, height):
    """rz(phi): the cubic-Bezier foot-height target of the gait (spec A4 helper terms)."""
    x = (phi + math.pi) / TWO_PI
    if x <= 0.5:
        t = 2.0 * x
        return height * (t * t * t + 3.0 * t * t * (1.0 - t))
    t = 2.0 * x - 1.0
    return height * (1.0 - (t * t * t + 3.0 * t * t * (1.0 - t)))


@njit(inline="always")
def wrap_2pi(x):
    """fmod(x, 2 pi), exactly, with a fast path for the range the phase advance produces."""
    if 0.0 <= x < TWO_PI:
        return x
    if TWO_PI <= x < 2.0 * TWO_PI:
        return x - TWO_PI
    return np.fmod(x, TWO_PI)


@njit(inline="always")
def reduce_means(scratch, term_means, n):
    """term_means[k] = (sum over the per-thread scratch rows of column k) / n, after a prange loop."""
    for k in range(term_means.shape[0]):
        total = 0.0
        for row in range(scratch.shape[0]):
            total += scratch[row, k]
        term_means[k] = total / n
