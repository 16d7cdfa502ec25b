"""The replay ring buffer a collector writes: (obs, action, reward, done) per env per step, and whether the env
was reset in that step instead of stepped.

Its capacity is a number of transitions (``TRANSITIONS`` by default, at least one step), so its memory does not
grow with N; each step writes the next slot, wrapping around, as an off-policy learner's buffer does.
"""

from __future__ import annotations

import numpy as np
from numba import njit

import kernels._cache  # noqa: F401  (Numba's cache is configured before a kernel is defined)

TRANSITIONS = 2**16


class Replay:
    def __init__(self, num_envs: int, obs_dim: int, act_dim: int, transitions: int = TRANSITIONS):
        self.steps = max(1, transitions // num_envs)
        self.obs = np.zeros((self.steps, num_envs, obs_dim), np.float32)
        self.actions = np.zeros((self.steps, num_envs, act_dim), np.float32)
        self.reward = np.zeros((self.steps, num_envs), np.float32)
        self.done = np.zeros((self.steps, num_envs), np.uint8)
        self.reset = np.zeros((self.steps, num_envs), np.bool_)
        for arr in (self.obs, self.actions, self.reward, self.done, self.reset):
            arr.fill(0)  # touch every page now, not on the first write of each slot
        self.cursor = 0
        self.written = 0  # steps written in all

    def write_step(self, obs: np.ndarray, actions: np.ndarray) -> None:
        """The observation an action was chosen from, and the action."""
        np.copyto(self.obs[self.cursor], obs)
        np.copyto(self.actions[self.cursor], actions)

    def write_outcome(self, reward: np.ndarray, done: np.ndarray, reset: np.ndarray) -> None:
        """The step's reward and done; completes the slot and moves to the next.

        ``reset`` marks the envs that were reset in this step instead of stepped (their action was not applied):
        their reward and done are stored as 0, and a learner skips those transitions.
        """
        c = self.cursor
        _write_outcome(reward, done, reset, self.reward[c], self.done[c], self.reset[c])
        self.cursor = (self.cursor + 1) % self.steps
        self.written += 1

    def last(self) -> dict[str, np.ndarray]:
        """The most recently completed slot."""
        slot = (self.cursor - 1) % self.steps
        return {
            "obs": self.obs[slot],
            "actions": self.actions[slot],
            "reward": self.reward[slot],
            "done": self.done[slot],
            "reset": self.reset[slot],
        }


@njit(cache=True)  # one compiled call instead of five NumPy ones: each is slow when cold after physics
def _write_outcome(reward, done, reset, slot_reward, slot_done, slot_reset):
    for r in range(reward.shape[0]):
        slot_reset[r] = reset[r]
        slot_reward[r] = 0.0 if reset[r] else reward[r]
        slot_done[r] = 0 if reset[r] else done[r]
