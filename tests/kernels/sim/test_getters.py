"""Getters against MuJoCo's own per-env data, the counter-based noise, and resets that touch only their rows."""

from __future__ import annotations

import mujoco
import numba
import numpy as np
import pytest

from kernels.sim import getters
from kernels.sim.collector import Collector
from kernels.tasks.g1_motion import constants as g1_motion
from kernels.tasks.g1_walk import getters as walk_getters


def _stepped(task: str) -> Collector:
    c = Collector(task, "handwritten", num_envs=6, threads=2, seed=3)
    with c.threads_limited():
        for _ in range(12):
            c.step()
    return c


@pytest.fixture(scope="module")
def walk() -> Collector:
    return _stepped("g1_walk")


@pytest.fixture(scope="module")
def motion() -> Collector:
    return _stepped("g1_motion")


@pytest.fixture(params=["walk", "motion"])
def collector(request) -> Collector:
    return request.getfixturevalue(request.param)


def _fresh_snapshot(c: Collector) -> dict[str, np.ndarray]:
    env = c.env
    out = {name: np.full_like(env.snap[name], np.nan) for name in env.physical if name != "noise_u"}
    out["noise_u"] = np.full_like(env.snap["noise_u"], np.nan)
    env.fill_snapshot(out)
    return out


def test_walk_getters_agree_with_each_envs_mjdata(walk):
    env, snap = walk.env, _fresh_snapshot(walk)
    m = env.tm.model
    feet = [m.site("left_foot").id, m.site("right_foot").id]
    for sim in range(env.num_envs):
        d = env.sim.get_data(sim)
        np.testing.assert_allclose(snap["qpos"][sim], d.qpos, rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(snap["qvel"][sim], d.qvel, rtol=1e-6, atol=1e-5)
        np.testing.assert_allclose(snap["sensordata"][sim], d.sensordata, rtol=1e-6, atol=1e-5)
        np.testing.assert_allclose(snap["actuator_force"][sim], d.actuator_force, rtol=1e-6, atol=1e-5)
        np.testing.assert_allclose(snap["feet_pos"][sim], d.site_xpos[feet], rtol=1e-6, atol=1e-6)


def test_motion_getters_agree_with_mj_object_velocity(motion):
    env, snap = motion.env, _fresh_snapshot(motion)
    m = env.tm.model
    velocity = np.zeros(6)
    for sim in range(env.num_envs):
        d = env.sim.get_data(sim)
        for k, name in enumerate(g1_motion.BODIES):
            b = m.body(name).id
            mujoco.mj_objectVelocity(m, d, mujoco.mjtObj.mjOBJ_XBODY, b, velocity, 0)
            np.testing.assert_allclose(snap["body_pos_w"][sim, k], d.xpos[b], atol=1e-6)
            np.testing.assert_allclose(snap["body_quat_w"][sim, k], d.xquat[b], atol=1e-6)
            np.testing.assert_allclose(snap["body_ang_vel_w"][sim, k], velocity[:3], rtol=1e-5, atol=1e-5)
            np.testing.assert_allclose(snap["body_lin_vel_w"][sim, k], velocity[3:], rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(snap["joint_pos"][sim], d.qpos[7:], atol=1e-6)
        np.testing.assert_allclose(snap["joint_vel"][sim], d.qvel[6:], rtol=1e-6, atol=1e-5)


def test_noise_is_uniform_and_independent_of_the_thread_count(collector):
    env = collector.env
    start = env.key_calls.copy()
    draws = []
    for threads in (1, 2):
        out = {name: np.empty_like(env.snap[name]) for name in env.physical}
        env.key_calls[:] = start  # the same draw of the getter stream, once per thread count
        numba.set_num_threads(threads)
        try:
            env._get(out)
        finally:
            numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
        draws.append(out["noise_u"])
    assert env.key_calls[getters.GETTERS] == start[getters.GETTERS] + 1  # and the call counted it
    np.testing.assert_array_equal(draws[0], draws[1])
    assert len(np.unique(draws[0])) == draws[0].size  # no repeats across rows and columns
    env._get(out)
    assert not np.array_equal(out["noise_u"], draws[0])  # the next draw is fresh


@numba.njit
def _next_keys(seed, key_calls, stream_id, n):
    return [getters.next_key(seed, key_calls, stream_id) for _ in range(n)]


def test_next_key_is_the_streams_next_call():
    """next_key counts the calls of each stream and gives the keys env.key gave before it:
    stream(seed, (stream << 56) + call)."""
    key_calls = np.array([5, 0, 2], np.int64)
    keys = _next_keys(9, key_calls, getters.BOOKKEEPING, 3)
    assert keys == [getters.stream(9, (2 << 56) + call) for call in (2, 3, 4)]
    assert key_calls.tolist() == [5, 0, 5]
    assert _next_keys(9, key_calls, getters.GETTERS, 1) == [getters.stream(9, 5)]
    assert len(set(keys) | {getters.stream(9, (1 << 56) + 2)}) == 4  # the streams of one seed do not meet


@pytest.mark.slow
def test_getter_noise_is_uniform_in_every_column():
    """The getters' two-draws-per-output path, over many rows: each column's mean and variance are U(0, 1)'s."""
    n = 4000
    zeros = {name: np.zeros((n, *shape)) for name, shape in (("qpos", (36,)), ("qvel", (35,)), ("sd", (75,)))}
    out = {
        name: np.zeros((n, *shape), np.float32)
        for name, shape in (("qpos", (36,)), ("qvel", (35,)), ("sd", (75,)))
    }
    af, feet, noise = (
        np.zeros((n, 29), np.float32),
        np.zeros((n, 2, 3), np.float32),
        np.zeros((n, 67), np.float32),
    )
    walk_getters.walk_rows(
        5,
        np.zeros(getters.N_STREAMS, np.int64),
        zeros["qpos"],
        zeros["qvel"],
        zeros["sd"],
        np.zeros((n, 29)),
        np.zeros((n, 6, 3)),
        np.array([0, 1]),
        out["qpos"],
        out["qvel"],
        out["sd"],
        af,
        feet,
        noise,
    )
    assert ((noise >= 0) & (noise < 1)).all()
    assert np.abs(noise.mean(axis=0) - 0.5).max() < 0.025  # 4.5 standard errors of a mean of 4000
    assert np.abs(noise.var(axis=0) - 1 / 12).max() < 0.01
    even, odd = noise[:, 0::2].ravel(), noise[:, 1::2].ravel()
    assert abs(np.corrcoef(even[: len(odd)], odd)[0, 1]) < 0.02  # the two halves of one draw are unrelated


def test_a_reset_touches_only_its_rows():
    c = _stepped("g1_walk")
    env = c.env
    sim = env.sim
    before = {name: sim[name].copy() for name in ("qpos", "qvel", "ctrl")}
    snap_before = {name: arr.copy() for name, arr in env.snap.items()}
    rows = np.array([1, 4], dtype=np.int64)
    with c.threads_limited():
        env.begin_reset(rows)
        sim.forward_rows(rows)
    keep = np.setdiff1d(np.arange(env.num_envs), rows)
    for name, arr in before.items():
        np.testing.assert_array_equal(sim[name][keep], arr[keep])
        assert not np.array_equal(sim[name][rows], arr[rows]), name
    for name, arr in env.snap.items():
        if arr.shape and arr.shape[0] == env.num_envs and name not in env.physical:
            np.testing.assert_array_equal(arr[keep], snap_before[name][keep])
