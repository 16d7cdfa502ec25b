"""What every task's snapshot getter shares: the random streams of an env and the observation noise.

A task's getter (``<task>/getters.py``) fills the spec E float32 arrays from a batch's live float64 MuJoCo state
in one fused ``@njit(parallel=True)`` loop over the envs, so no Python loop runs per env. The same loop draws the
observation noise ``noise_u`` of its rows from a counter-based generator (SplitMix64 of the seed, the draw and the
element; two 24-bit uniforms per 64-bit output), so a draw is a pure function of (seed, draw, row, column): the
same on any thread count, and no serial generator sits on the hot path.
"""

from __future__ import annotations

import numpy as np
from numba import njit

import kernels._cache  # noqa: F401  (Numba's cache is configured before a kernel is defined)

_GAMMA = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31, _S40 = np.uint64(30), np.uint64(27), np.uint64(31), np.uint64(40)
_S16, _LOW24 = np.uint64(16), np.uint64(0xFFFFFF)
_UNIT = np.float32(1.0 / (1 << 24))


@njit(inline="always")
def _mix(z):
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)


@njit(cache=True)
def stream(seed, draw):
    """The 64-bit key of one draw (one getter call) of one seed."""
    return _mix(_mix(np.uint64(seed) + _GAMMA) ^ (np.uint64(draw) * _GAMMA))


# An env's random streams: each call of its getter, reset or bookkeeping loops draws the next key of one.
N_STREAMS = 3
GETTERS, RESETS, BOOKKEEPING = range(N_STREAMS)


@njit(inline="always")
def next_key(seed, key_calls, stream_id):
    """The key of the next call in stream ``stream_id``: ``stream(seed, (stream_id << 56) + n)`` for its n-th
    call, counted in ``key_calls[stream_id]``. The compiled loops take (seed, key_calls) and derive their key
    here, so no separate call per key runs in the step."""
    n = key_calls[stream_id]
    key_calls[stream_id] = n + 1
    return stream(seed, (np.int64(stream_id) << 56) + n)


@njit(inline="always")
def uniform(key, index):
    """A float32 in [0, 1) with 24 random bits: element ``index`` of the draw ``key``."""
    return np.float32(_mix(key + (np.uint64(index) + np.uint64(1)) * _GAMMA) >> _S40) * _UNIT


@njit(inline="always")
def uniform_in(key, index, lo, hi):
    """Element ``index`` of the draw ``key``, as a float64 uniform in [lo, hi)."""
    return lo + (hi - lo) * np.float64(uniform(key, index))


@njit(inline="always")
def noise_row(key, r, out):
    """Row ``r``'s noise: two 24-bit uniforms from each 64-bit draw (bits 40-63 and 16-39)."""
    cols = out.shape[1]
    half = (cols + 1) // 2
    for p in range(half):
        z = _mix(key + (np.uint64(r * half + p) + np.uint64(1)) * _GAMMA)
        out[r, 2 * p] = np.float32(z >> _S40) * _UNIT
        if 2 * p + 1 < cols:
            out[r, 2 * p + 1] = np.float32((z >> _S16) & _LOW24) * _UNIT
