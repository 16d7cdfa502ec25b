"""The env's compiled bookkeeping: counters, command resampling, time-outs, pushes, the reset masks."""

from __future__ import annotations

import numpy as np

from kernels.geometry import quat_from_euler, quat_rotate_np
from kernels.sim import bookkeeping, getters
from kernels.sim.walk import COMMAND_RANGE, COMMAND_RESAMPLE_STEPS, EPISODE_STEPS, ZERO_COMMAND_PROB

SEED = 11


def _key_calls() -> np.ndarray:
    return np.zeros(getters.N_STREAMS, np.int64)


def _walk(n: int, **state):
    arrays = {
        "done": np.zeros(n, np.uint8),
        "just_reset": np.zeros(n, np.bool_),
        "episode_steps": np.zeros(n, np.int64),
        "command_steps": np.zeros(n, np.int64),
        "commands": np.full((n, 3), 0.25, np.float32),
        "phase": np.full((n, 2), 1.0, np.float32),
        "feet_air_time": np.full((n, 2), 0.5, np.float32),
        "last_contact": np.ones((n, 2), np.uint8),
        "feet_peak_height": np.full((n, 2), 0.1, np.float32),
        "reset": np.zeros(n, np.bool_),
    }
    arrays.update(state)
    a = arrays
    bookkeeping.walk_advance(
        SEED,
        _key_calls(),
        a["done"],
        a["just_reset"],
        a["episode_steps"],
        a["command_steps"],
        a["commands"],
        COMMAND_RANGE,
        ZERO_COMMAND_PROB,
        COMMAND_RESAMPLE_STEPS,
        EPISODE_STEPS,
        a["phase"],
        a["feet_air_time"],
        a["last_contact"],
        a["feet_peak_height"],
        a["reset"],
    )
    return a


def test_walk_resamples_the_command_once_the_counter_passes_500_and_times_out_at_1000():
    a = _walk(
        4,
        command_steps=np.array([499, 500, 3, 3]),
        episode_steps=np.array([10, 10, EPISODE_STEPS - 2, EPISODE_STEPS - 1]),
        done=np.array([0, 0, 0, 1], np.uint8),
    )
    assert a["command_steps"].tolist() == [500, 0, 4, 4]
    assert (a["commands"][0] == 0.25).all() and not (a["commands"][1] == 0.25).all()
    assert (np.abs(a["commands"][1]) <= COMMAND_RANGE).all()
    assert a["reset"].tolist() == [False, False, False, True]
    a = _walk(1, episode_steps=np.array([EPISODE_STEPS - 1]))
    assert a["reset"].tolist() == [True]  # the 1000th step times out


def test_walk_rows_reset_this_step_get_their_reset_bookkeeping_back_and_count_nothing():
    a = _walk(2, just_reset=np.array([True, False]), done=np.array([1, 0], np.uint8))
    np.testing.assert_allclose(a["phase"][0], [0.0, np.pi], atol=1e-6)
    assert a["feet_air_time"][0].tolist() == [0, 0] and a["last_contact"][0].tolist() == [0, 0]
    assert a["episode_steps"].tolist() == [0, 1] and a["reset"].tolist() == [False, False]
    assert a["phase"][1].tolist() == [1.0, 1.0]  # the kernel's bookkeeping of the other rows stays


def test_walk_push_every_interval_adds_a_horizontal_kick_within_the_magnitude_range():
    n = 500
    push_steps, interval = np.zeros(n, np.int64), np.full(n, 3, np.int64)
    qvel = np.zeros((n, 35))
    key_calls = _key_calls()
    for step in range(1, 7):
        before = qvel.copy()
        bookkeeping.walk_push(1, key_calls, push_steps, interval, np.array([0.1, 2.0]), qvel)
        assert key_calls.tolist() == [0, 0, step]  # each call draws the next key of the bookkeeping stream
        kicked = np.linalg.norm(qvel[:, :2] - before[:, :2], axis=1)
        if step % 3 == 0:
            assert ((kicked >= 0.1 - 1e-9) & (kicked <= 2.0 + 1e-9)).all()
        else:
            assert (kicked == 0).all()
    assert (qvel[:, 2:] == 0).all()


def _motion(n: int, frames: int = 100, **state):
    q = quat_from_euler(np.zeros(n), np.zeros(n), np.full(n, np.pi / 2))  # heading +90 degrees
    a = {
        "done": np.zeros(n, np.uint8),
        "just_reset": np.zeros(n, np.bool_),
        "episode_steps": np.zeros(n, np.int64),
        "time_steps": np.zeros(n, np.int32),
        "failed": np.zeros(3, np.int64),
        "fail_ema": np.array([0.5, 0.0, 2.0]),
        "push_countdown": np.full(n, 10, np.int64),
        "qpos": np.concatenate([np.zeros((n, 3)), q, np.zeros((n, 29))], axis=1),
        "qvel": np.zeros((n, 35)),
        "reset": np.zeros(n, np.bool_),
        "resample": np.zeros(n, np.bool_),
    }
    a.update(state)
    bookkeeping.motion_advance(
        SEED,
        _key_calls(),
        a["done"],
        a["just_reset"],
        a["episode_steps"],
        a["time_steps"],
        frames,
        500,
        a["failed"],
        a["fail_ema"],
        0.25,
        a["push_countdown"],
        np.array([50.0, 150.0]),
        np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.78]),
        a["qpos"],
        a["qvel"],
        a["reset"],
        a["resample"],
    )
    return a


def test_motion_counts_failures_per_bin_advances_t_and_masks_the_resets():
    a = _motion(
        5,
        done=np.array([1, 1, 0, 0, 0], np.uint8),
        time_steps=np.array([10, 90, 98, 99, 40], np.int32),
        episode_steps=np.array([3, 3, 3, 3, 499]),
        just_reset=np.array([False, False, False, False, False]),
    )
    assert a["failed"].tolist() == [1, 0, 1]  # 3 bins over 100 frames: t = 10 is in bin 0, t = 90 in bin 2
    # the failure EMA moves a quarter (alpha = 0.25 here) of the way to this step's counts
    np.testing.assert_allclose(a["fail_ema"], [0.25 * 1 + 0.75 * 0.5, 0.0, 0.25 * 1 + 0.75 * 2.0])
    assert a["time_steps"].tolist() == [11, 91, 99, 100, 41]
    assert a["reset"].tolist() == [True, True, False, True, True]
    assert a["resample"].tolist() == [False, False, False, True, False]  # only ran off the clip
    b = _motion(
        1, just_reset=np.array([True]), time_steps=np.array([99], np.int32), done=np.array([1], np.uint8)
    )
    assert b["time_steps"].tolist() == [99] and b["failed"].sum() == 0 and not b["reset"][0]


def test_motion_push_adds_the_world_frame_yaw_rate_in_the_body_frame():
    a = _motion(200, push_countdown=np.ones(200, np.int64))
    q = a["qpos"][:, 3:7]
    world = quat_rotate_np(q, a["qvel"][:, 3:6])
    # only a yaw-rate push: the world angular velocity is about z, within +-0.78
    np.testing.assert_allclose(world[:, :2], 0.0, atol=1e-12)
    assert (np.abs(world[:, 2]) <= 0.78).all() and np.abs(world[:, 2]).max() > 0.5
    assert (a["push_countdown"] >= 50).all() and (a["push_countdown"] <= 150).all()
