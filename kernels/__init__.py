"""fusegate kernels: the G1 ``update_state`` hot slice, its NumPy reference and its fused fast paths.

import kernels
from gate.meter.synthetic import make_inputs  # the meter's synthetic snapshots (spec E4)
k = kernels.load("g1_walk", impl="handwritten", num_envs=4096)
out = k.update_state(make_inputs("g1_walk", num_envs=4096, seed=0))

This package is the subject the gate judges; nothing here measures it (``gate.meter`` does).
"""

from kernels import _cache

NUMBA_CACHE_DIR = _cache.configure()  # before any cached kernel is defined

from kernels.registry import IMPLS, REFERENCE, TASKS, copy_snapshot, load  # noqa: E402

__all__ = ["IMPLS", "REFERENCE", "TASKS", "copy_snapshot", "load"]
