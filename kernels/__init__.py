"""fusegate kernels: the G1 ``update_state`` hot slice, its NumPy reference and its fused fast paths.

import kernels
from kernels.tasks.g1_walk.meter import make_inputs  # the task's synthetic snapshots (spec E4)
k = kernels.load("g1_walk", impl="handwritten", num_envs=4096)
out = k.update_state(make_inputs(num_envs=4096, seed=0))

Each task is one package under ``kernels.tasks`` (``kernels.registry``); the rest of this package is what every
task shares. Nothing here measures it (``gate.meter`` does). Importing the package imports no Numba:
``NUMBA_CACHE_DIR`` (``kernels._cache``) is configured when a kernel module is first imported.
"""

from kernels.registry import copy_snapshot

__all__ = ["IMPLS", "NUMBA_CACHE_DIR", "REFERENCE", "TASKS", "copy_snapshot", "load"]


def __getattr__(name: str):
    if name in ("TASKS", "IMPLS", "REFERENCE", "load"):  # the registry's, made on first use
        from kernels import registry

        return getattr(registry, name)
    if name == "NUMBA_CACHE_DIR":
        import kernels._cache

        return kernels._cache.CACHE_DIR
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
