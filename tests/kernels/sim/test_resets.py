"""Reset loops: the drawn state lies in spec A1/B7's ranges, and adaptive sampling follows its weights."""

from __future__ import annotations

import numpy as np
import pytest

from kernels.sim.collector import Collector
from kernels.tasks.g1_motion import constants as g1_motion
from kernels.tasks.g1_walk import constants as g1_walk


@pytest.fixture(scope="module")
def walk() -> Collector:
    return Collector("g1_walk", "handwritten", num_envs=64, threads=1, seed=4)


@pytest.fixture(scope="module")
def motion() -> Collector:
    return Collector("g1_motion", "handwritten", num_envs=64, threads=1, seed=4)


def test_walk_reset_draws_spec_a1_ranges(walk):
    env = walk.env
    rows = env.all_rows
    env.begin_reset(rows)
    qpos, qvel, key = env.sim.qpos, env.sim.qvel, env.key_qpos
    assert (np.abs(qpos[:, :2] - key[:2]) <= 0.5).all() and (qpos[:, 2] == key[2]).all()
    np.testing.assert_allclose(np.linalg.norm(qpos[:, 3:7], axis=1), 1.0)
    ratio = qpos[:, 7:] / np.where(key[7:] == 0, 1, key[7:])
    assert ((ratio[:, key[7:] != 0] >= 0.5) & (ratio[:, key[7:] != 0] <= 1.5)).all()
    assert (np.abs(qvel[:, :6]) <= 0.5).all() and (qvel[:, 6:] == 0).all()
    np.testing.assert_array_equal(env.sim.ctrl, qpos[:, 7:])
    freq = env.snap["phase_dt"] / (2 * np.pi * g1_walk.DT)
    assert ((freq >= 1.25 - 1e-6) & (freq <= 1.5 + 1e-6)).all()


def test_adaptive_sampling_never_draws_a_frame_from_a_bin_without_weight(motion):
    env = motion.env
    bins = env.bins
    env.fail_ema[:] = 0.0
    env.fail_ema[3] = 1e6  # one bin failing all the time outweighs the uniform share
    env.begin_reset(env.all_rows)
    t = env.snap["time_steps"]
    width = (env.frames - 1) / bins
    assert ((t >= 3 * width - 1) & (t <= 4 * width)).mean() > 0.95
    env.fail_ema[:] = 0.0


def test_motion_reset_is_the_clip_frame_plus_bounded_noise(motion):
    env = motion.env
    env.begin_reset(env.all_rows)
    t, clip = env.snap["time_steps"], env.clip
    qpos, qvel = env.sim.qpos, env.sim.qvel
    assert (np.abs(qpos[:, :3] - clip["body_pos_w"][t, 0]) <= [0.05, 0.05, 0.01]).all()
    assert (qpos[:, 7:] >= g1_motion.SOFT_LOWER).all() and (qpos[:, 7:] <= g1_motion.SOFT_UPPER).all()
    assert (np.abs(qpos[:, 7:] - clip["joint_pos"][t]) <= 0.1 + 1e-12).all()
    np.testing.assert_array_equal(qvel[:, 6:], clip["joint_vel"][t])
    assert (np.abs(qvel[:, :3] - clip["body_lin_vel_w"][t, 0]) <= [0.5, 0.5, 0.2]).all()
