"""Scalar @njit helpers shared by the fused kernels (hand-written and generated), defined once."""

from __future__ import annotations

import math

import numpy as np
from numba import njit

import kernels._cache  # noqa: F401  (Numba's cache is configured before a kernel is defined)

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


# Cephes' atan: atan(z) = z + z^3 P(z^2) / Q(z^2) on |z| <= 0.66 (relative error about 1e-16 in doubles).
_ATAN_P = (
    -8.750608600031904122785e-1,
    -1.615753718733365076637e1,
    -7.500855792314704667340e1,
    -1.228866684490136173410e2,
    -6.485021904942025371773e1,
)
_ATAN_Q = (
    2.485846490142306297962e1,
    1.650270098316988542046e2,
    4.328810604912902668951e2,
    4.853903996359136964868e2,
    1.945506571482613964425e2,
)
_ATAN_MID = 0.66  # Cephes' switch to atan(r) = pi/4 + atan((r - 1) / (r + 1))


@njit(inline="always")
def atan2_nonneg(y, x):
    """atan2(y, x) for y, x >= 0, branch-free so that LLVM vectorises the loops it is inlined in.

    The smaller over the larger argument r in [0, 1] goes through Cephes' atan (r > 0.66 via
    pi/4 + atan((r - 1) / (r + 1))), and pi/2 - atan(r) gives the angle when y > x. atan2(0, 0) = 0 as in C.
    Call it from a function compiled with ``error_model="numpy"`` (an inlined function takes its caller's
    error model): Python's would add a zero-division branch to every division, which stops the vectoriser
    (no divisor here can be zero).
    """
    r = min(y, x) / max(y, x, 5e-324)  # the smallest subnormal: any pair of non-zero inputs keeps its ratio
    high = r > _ATAN_MID
    z = (r - 1.0) / (r + 1.0) if high else r
    zz = z * z
    p = (((_ATAN_P[0] * zz + _ATAN_P[1]) * zz + _ATAN_P[2]) * zz + _ATAN_P[3]) * zz + _ATAN_P[4]
    q = ((((zz + _ATAN_Q[0]) * zz + _ATAN_Q[1]) * zz + _ATAN_Q[2]) * zz + _ATAN_Q[3]) * zz + _ATAN_Q[4]
    a = (0.25 * math.pi if high else 0.0) + z + z * zz * p / q
    return 0.5 * math.pi - a if y > x else a


# Structure-of-arrays lanes for per-body passes that LLVM should vectorise: quantity r of body b lives at
# s[r * LANES + b] of a per-thread float64 row. LANES pads the bodies to a multiple of the 4-double vectors, so
# the loop leaves no scalar remainder; the offsets are compile-time constants, so LLVM sees that the rows a
# pass writes never overlap the rows it reads.
LANES = 16


@njit(inline="always")
def lanes3(s, row, b):
    """Lane b of rows row .. row + 2, as a 3-tuple."""
    return (s[row * LANES + b], s[(row + 1) * LANES + b], s[(row + 2) * LANES + b])


@njit(inline="always")
def lanes4(s, row, b):
    """Lane b of rows row .. row + 3, as a 4-tuple."""
    return (s[row * LANES + b], s[(row + 1) * LANES + b], s[(row + 2) * LANES + b], s[(row + 3) * LANES + b])


@njit(inline="always")
def set_lanes(s, row, b, values):
    """values[k] into lane b of row row + k."""
    for k in range(len(values)):
        s[(row + k) * LANES + b] = values[k]


@njit(cache=True)  # one compiled pass instead of two NumPy reductions: it runs on every call
def all_in_range(values, stop):
    """Whether every value lies in [0, stop)."""
    for v in values.ravel():  # noqa: SIM110 - a plain loop is what Numba compiles well
        if v < 0 or v >= stop:
            return False
    return True
