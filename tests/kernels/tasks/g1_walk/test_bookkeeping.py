"""g1_walk's compiled bookkeeping: counters, command resampling, time-outs, pushes, the reset mask."""

from __future__ import annotations

import numpy as np

from kernels.sim import getters
from kernels.tasks.g1_walk import bookkeeping
from kernels.tasks.g1_walk.env import COMMAND_RANGE, COMMAND_RESAMPLE_STEPS, EPISODE_STEPS, ZERO_COMMAND_PROB

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
