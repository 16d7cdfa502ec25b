"""Behaviour every implementation shares: NaN isolation, noise off, no per-env allocation, the thread cap."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from numba.core.runtime import rtsys

import kernels
from gate.meter import parity
from kernels import kernel as kernel_mod
from kernels.tasks.g1_walk import constants as walk
from tests.kernels.snapshots import make_inputs

IMPL_CASES = [(task, impl) for task in kernels.TASKS for impl in kernels.registry.available(task)]


@pytest.mark.parametrize("impl", kernels.IMPLS)
def test_walk_nan_in_qpos_ends_that_env_only(impl):
    n, bad_env = 300, 117
    clean = make_inputs("g1_walk", n, seed=11)
    dirty = kernels.copy_snapshot(clean)
    dirty["qpos"][bad_env, 10] = np.nan
    k_clean = kernels.load("g1_walk", impl, num_envs=n, threads=2)
    k_dirty = kernels.load("g1_walk", impl, num_envs=n, threads=2)
    want = {name: a.copy() for name, a in k_clean.update_state(clean).items()}
    got = k_dirty.update_state(dirty)
    assert got["done"][bad_env] == 1
    others = np.arange(n) != bad_env
    for name in ("reward", "done", "obs", "privileged_obs"):
        np.testing.assert_array_equal(got[name][others], want[name][others], err_msg=name)
    for name in ("phase", "feet_air_time", "last_contact", "feet_peak_height"):
        np.testing.assert_array_equal(dirty[name][others], clean[name][others], err_msg=name)


@pytest.mark.parametrize("impl", kernels.IMPLS)
def test_walk_noise_level_zero_gives_the_noise_free_values_exactly(impl):
    snap = make_inputs("g1_walk", 257, seed=2)
    out = kernels.load("g1_walk", impl, num_envs=257, noise_level=0.0).update_state(snap)
    obs, priv = out["obs"], out["privileged_obs"]
    pairs = [
        (walk.OBS_LINVEL, walk.PRIV_LINVEL, 3),
        (walk.OBS_GYRO, walk.PRIV_GYRO, 3),
        (walk.OBS_GRAVITY, walk.PRIV_GRAVITY, 3),
        (walk.OBS_JOINT_POS, walk.PRIV_JOINT_POS, walk.NUM_JOINTS),
        (walk.OBS_JOINT_VEL, walk.PRIV_JOINT_VEL, walk.NUM_JOINTS),
    ]
    for o, p, width in pairs:
        np.testing.assert_array_equal(obs[:, o : o + width], priv[:, p : p + width])
    noisy = kernels.load("g1_walk", impl, num_envs=257, noise_level=1.0).update_state(
        make_inputs("g1_walk", 257, seed=2)
    )
    assert not np.array_equal(noisy["obs"][:, :3], priv[:, walk.PRIV_LINVEL : walk.PRIV_LINVEL + 3])


@pytest.mark.parametrize(("task", "impl"), [c for c in IMPL_CASES if c[1] != kernels.REFERENCE])
def test_fused_kernels_allocate_nothing_per_env(task, impl):
    """Warm calls make only Numba's fixed per-launch runtime allocations: the same count at any N or threads."""
    counts = set()
    for n, threads in ((1000, 1), (4099, 2), (20000, 2)):
        snap = make_inputs(task, n, seed=0)
        k = kernels.load(task, impl, num_envs=n, threads=threads)
        k.update_state(snap)
        before = rtsys.get_allocation_stats()
        for _ in range(3):
            k.update_state(snap)
        after = rtsys.get_allocation_stats()
        assert after.alloc - before.alloc == after.free - before.free, "a warm call leaked runtime memory"
        counts.add((after.alloc - before.alloc) / 3)
    assert len(counts) == 1, f"allocations per call vary with N or threads: {counts}"


def test_thread_cap_by_num_envs():
    per = kernel_mod.MIN_ENVS_PER_THREAD
    top = kernel_mod.max_threads()
    assert kernel_mod.resolve_threads(1, None) == 1
    assert kernel_mod.resolve_threads(per - 1, None) == 1
    assert kernel_mod.resolve_threads(per * 64, None) == top
    assert kernel_mod.resolve_threads(per * 64, 1) == 1
    assert kernel_mod.resolve_threads(per, top) == 1  # capped by N even when asked for more
    k = kernels.load("g1_walk", "handwritten", num_envs=7, threads=top)
    assert k.threads == 1
    assert kernels.load("g1_walk", "numpy", num_envs=per * 64).threads == 1


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "2"])
def test_bad_thread_request(bad):
    with pytest.raises(ValueError, match="threads"):
        kernels.load("g1_walk", "handwritten", num_envs=1000, threads=bad)


def test_thread_request_beyond_numba_pool():
    with pytest.raises(ValueError, match="NUMBA_NUM_THREADS"):
        kernels.load("g1_walk", "handwritten", num_envs=10**6, threads=kernel_mod.max_threads() + 1)


def test_compiled_kernels_are_cached_under_the_source_hash():
    """The cache root is named by the keying scheme; under it each module is keyed by the sources it imports
    (tests/kernels/test_cache.py), so an edit to a constant or helper it reads never loads a stale kernel."""
    import pkgutil
    from importlib import import_module

    from numba.core.caching import FunctionCache
    from numba.core.dispatcher import Dispatcher

    from kernels import _cache

    assert kernels.NUMBA_CACHE_DIR.name == _cache.source_hash()
    # every module of the package imports Numba only after the cache is configured: each cached kernel is filed
    # under the root (a module that defined one first would leave it in Numba's default place)
    cached, outside = set(), []
    for info in pkgutil.walk_packages(kernels.__path__, "kernels."):
        module = import_module(info.name)
        for name, value in vars(module).items():
            if not isinstance(value, Dispatcher) or not isinstance(value._cache, FunctionCache):
                continue
            if value.py_func.__module__ == module.__name__:
                cached.add(name)
                if not value._cache._cache_path.startswith(str(kernels.NUMBA_CACHE_DIR)):
                    outside.append(f"{module.__name__}.{name}")
    assert outside == []
    assert {"update_state_kernel", "generic_kernel", "write_ctrl", "walk_rows", "all_in_range"} <= cached


@pytest.mark.parametrize("impl", kernels.IMPLS)
def test_walk_infinities_are_not_nan(impl):
    """Only NaN ends an env (spec A5); +inf and -inf together (whose sum is NaN) must not be mistaken for it."""
    snap = make_inputs("g1_walk", 40, seed=9)
    snap["sensordata"][:, 70:73] = 0  # no contact terminations
    snap["sensordata"][:, 2] = 0.9  # upright
    snap["qpos"][3, 20] = np.inf
    snap["qpos"][3, 21] = -np.inf
    snap["qvel"][5, 30] = np.nan
    if impl != kernels.REFERENCE:
        assert parity.compare_on(kernels.copy_snapshot(snap), task="g1_walk", impl=impl).ok
    done = kernels.load("g1_walk", impl, num_envs=40).update_state(snap)["done"]
    assert done[3] == 0
    assert done[5] == 1
    assert done.sum() == 1


@pytest.mark.compile
def test_a_second_clone_of_the_same_sources_loads_the_first_ones_compiled_kernels(tmp_path):
    """Numba files a function under its directory's absolute path; ``kernels._cache.PackageLocator`` files this
    package's under their place in it, so a fresh clone (or asv environment) compiles nothing already compiled."""
    import shutil

    code = (
        "import kernels\n"
        "from kernels.tasks.g1_walk import handwritten as g1_walk\n"
        "from kernels.tasks.g1_walk.meter import make_inputs\n"
        "kernels.load('g1_walk', 'handwritten', num_envs=16).update_state(make_inputs(16, 0))\n"
        "stats = g1_walk.update_state_kernel.stats\n"
        "print(len(stats.cache_hits), len(stats.cache_misses), g1_walk.update_state_kernel._cache._cache_path)\n"
    )
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("NUMBA_CACHE_LOCATOR_CLASSES", None)
    runs = []
    for clone in ("a", "b"):
        shutil.copytree(
            Path(kernels.__file__).parent,
            tmp_path / clone / "kernels",
            ignore=shutil.ignore_patterns("__pycache__"),
        )
        out = subprocess.run(
            [sys.executable, "-c", code],
            cwd=tmp_path / clone,
            env={**env, "PYTHONPATH": str(tmp_path / clone)},
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        runs.append((int(out[0]), int(out[1]), out[2]))
    (_, first_misses, first_path), (hits, misses, path) = runs
    assert first_misses >= 1  # the first clone compiled
    assert hits >= 1 and misses == 0  # the second loaded it
    assert path == first_path and "/package" in path
