"""g1_motion's compiled bookkeeping: counters, failures per bin, pushes, the reset masks."""

from __future__ import annotations

import numpy as np

from kernels.geometry import quat_from_euler, quat_rotate_np
from kernels.sim import getters
from kernels.tasks.g1_motion import bookkeeping

SEED = 11


def _key_calls() -> np.ndarray:
    return np.zeros(getters.N_STREAMS, np.int64)


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
