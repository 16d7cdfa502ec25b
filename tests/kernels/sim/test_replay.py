"""The replay ring buffer."""

from __future__ import annotations

import numpy as np

from kernels.sim.replay import Replay


def test_replay_is_a_ring_of_complete_transitions():
    replay = Replay(num_envs=4, obs_dim=3, act_dim=2, transitions=12)
    assert replay.steps == 3
    reset = np.array([False, True, False, False])
    for step in range(5):
        replay.write_step(np.full((4, 3), step, np.float32), np.full((4, 2), -step, np.float32))
        replay.write_outcome(np.full(4, step, np.float32), np.full(4, 1, np.uint8), reset)
    last = replay.last()
    assert last["obs"][0, 0] == 4 and last["actions"][0, 0] == -4 and last["reward"][0] == 4
    assert sorted(replay.reward[:, 0]) == [2, 3, 4] and replay.written == 5
    # a row reset in its step keeps no reward or done: its action was never applied
    assert last["reset"].tolist() == reset.tolist() and last["reward"][1] == 0 and last["done"][1] == 0
