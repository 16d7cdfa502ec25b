"""What every env's per-step bookkeeping shares: ctrl from actions before physics, and how a task's own compiled
bookkeeping loops (pushes, counters, command resampling, the reset mask: ``<task>/bookkeeping.py``) draw theirs.

Random numbers come from the counter-based generator of ``getters`` (element r * DRAWS + k of the call's
stream), so the bookkeeping of a seed is the same on any thread count and for any implementation.
"""

from __future__ import annotations

from numba import njit

import kernels._cache  # noqa: F401  (Numba's cache is configured before a kernel is defined)

DRAWS = 8  # random numbers per env per call


@njit(cache=True)  # serial: waking the thread pool after the policy costs more than it saves
def write_ctrl(actions, scale, default_pose, ctrl):
    """ctrl = default_pose + scale * actions."""
    for i in range(actions.shape[0]):
        for j in range(actions.shape[1]):
            ctrl[i, j] = default_pose[j] + scale[j] * actions[i, j]
