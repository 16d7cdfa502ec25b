"""What every task's reset loop shares: how it draws its random numbers and clears a row's time and warm start.

A task resets its rows in one compiled loop of its own (``<task>/resets.py``). A reset touches only its rows: it
writes their MuJoCo state (qpos, qvel, ctrl; time and warm start cleared) and their bookkeeping, drawing every
random number from the counter-based generator of ``getters`` (draw k of row r is element r * DRAWS + k), so a
reset is a pure function of (seed, reset call, row) and no Python loop or chain of small NumPy calls runs per
reset. The caller then runs mj_forward on the rows.
"""

from __future__ import annotations

from numba import njit

import kernels._cache  # noqa: F401  (Numba's cache is configured before a kernel is defined)

DRAWS = 48  # random numbers per reset row (each task uses fewer)


@njit(inline="always")
def clear(r, time, warmstart):
    """Row ``r``'s simulation time and solver warm start to zero."""
    time[r] = 0.0
    for j in range(warmstart.shape[1]):
        warmstart[r, j] = 0.0
