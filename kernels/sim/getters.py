"""Snapshot getters: the spec E2/E3 float32 arrays filled from a batch's live float64 MuJoCo state.

Each getter is one fused ``@njit(parallel=True)`` loop over the envs, so no Python loop runs per env. Body velocities are taken at the body origin, as mjlab does (spec B2):
``v = cvel_lin - w x (subtree_com[root] - xpos)``, which equals ``mj_objectVelocity(mjOBJ_XBODY, world)``.

The same loop draws the observation noise ``noise_u`` of its rows from a counter-based generator (SplitMix64 of
the seed, the draw and the element; two 24-bit uniforms per 64-bit output), so a draw is a pure function of
(seed, draw, row, column): the same on any thread count, and no serial generator sits on the hot path.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

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
def _noise_row(key, r, out):
    """Row ``r``'s noise: two 24-bit uniforms from each 64-bit draw (bits 40-63 and 16-39)."""
    cols = out.shape[1]
    half = (cols + 1) // 2
    for p in range(half):
        z = _mix(key + (np.uint64(r * half + p) + np.uint64(1)) * _GAMMA)
        out[r, 2 * p] = np.float32(z >> _S40) * _UNIT
        if 2 * p + 1 < cols:
            out[r, 2 * p + 1] = np.float32((z >> _S16) & _LOW24) * _UNIT


@njit(parallel=True, cache=True)
def walk_rows(
    seed,
    key_calls,
    qpos,
    qvel,
    sensordata,
    actuator_force,
    site_xpos,
    feet_sites,
    out_qpos,
    out_qvel,
    out_sd,
    out_af,
    out_feet,
    out_noise,
):
    key = next_key(seed, key_calls, GETTERS)
    for r in prange(qpos.shape[0]):
        for j in range(qpos.shape[1]):
            out_qpos[r, j] = qpos[r, j]
        for j in range(qvel.shape[1]):
            out_qvel[r, j] = qvel[r, j]
        for j in range(sensordata.shape[1]):
            out_sd[r, j] = sensordata[r, j]
        for j in range(actuator_force.shape[1]):
            out_af[r, j] = actuator_force[r, j]
        for f in range(feet_sites.shape[0]):
            for c in range(3):
                out_feet[r, f, c] = site_xpos[r, feet_sites[f], c]
        _noise_row(key, r, out_noise)


@njit(parallel=True, cache=True)
def motion_rows(
    seed,
    key_calls,
    xpos,
    xquat,
    cvel,
    subtree_com,
    bodies,
    roots,
    qpos,
    qvel,
    out_pos,
    out_quat,
    out_lin,
    out_ang,
    out_jpos,
    out_jvel,
    out_noise,
):
    key = next_key(seed, key_calls, GETTERS)
    for r in prange(qpos.shape[0]):
        for k in range(bodies.shape[0]):
            b = bodies[k]
            root = roots[k]
            wx, wy, wz = cvel[r, b, 0], cvel[r, b, 1], cvel[r, b, 2]
            dx = subtree_com[r, root, 0] - xpos[r, b, 0]
            dy = subtree_com[r, root, 1] - xpos[r, b, 1]
            dz = subtree_com[r, root, 2] - xpos[r, b, 2]
            out_lin[r, k, 0] = cvel[r, b, 3] - (wy * dz - wz * dy)
            out_lin[r, k, 1] = cvel[r, b, 4] - (wz * dx - wx * dz)
            out_lin[r, k, 2] = cvel[r, b, 5] - (wx * dy - wy * dx)
            out_ang[r, k, 0] = wx
            out_ang[r, k, 1] = wy
            out_ang[r, k, 2] = wz
            for c in range(3):
                out_pos[r, k, c] = xpos[r, b, c]
            for c in range(4):
                out_quat[r, k, c] = xquat[r, b, c]
        for j in range(out_jpos.shape[1]):
            out_jpos[r, j] = qpos[r, 7 + j]
            out_jvel[r, j] = qvel[r, 6 + j]
        _noise_row(key, r, out_noise)
