"""Action selection: a float32 NumPy MLP actor (obs -> 512 -> 256 -> 128 -> 29, ELU) with Gaussian exploration.

The weights are seeded (PyTorch's default uniform init, +-1/sqrt(fan_in)), so a policy is reproducible and
untrained: its actions are the mean plus std * N(0, 1) noise, as rsl_rl's PPO samples them (initial std 1.0).
Every intermediate lives in a buffer allocated once; a forward pass allocates nothing.
"""

from __future__ import annotations

import itertools

import numpy as np

HIDDEN = (512, 256, 128)
ACTION_STD = 1.0


class MLPPolicy:
    def __init__(self, obs_dim: int, act_dim: int, num_envs: int, seed: int):
        rng = np.random.default_rng(seed)
        dims = (obs_dim, *HIDDEN, act_dim)
        self.layers = []
        for fan_in, fan_out in itertools.pairwise(dims):
            bound = 1.0 / np.sqrt(fan_in)
            weight = rng.uniform(-bound, bound, (fan_in, fan_out)).astype(np.float32)
            bias = rng.uniform(-bound, bound, fan_out).astype(np.float32)
            self.layers.append((weight, bias, np.empty((num_envs, fan_out), np.float32)))
        self._negative = [np.empty((num_envs, d), np.float32) for d in HIDDEN]

    def mean(self, obs: np.ndarray) -> np.ndarray:
        x = obs
        for k, (weight, bias, out) in enumerate(self.layers):
            np.matmul(x, weight, out=out)
            out += bias
            if k < len(HIDDEN):  # ELU: x if x > 0 else exp(x) - 1
                negative = self._negative[k]
                np.minimum(out, 0.0, out=negative)
                np.expm1(negative, out=negative)
                np.maximum(out, 0.0, out=out)
                out += negative
            x = out
        return x

    def act(self, obs: np.ndarray, rng: np.random.Generator, out: np.ndarray) -> np.ndarray:
        """Sampled actions (N, act_dim) into ``out``."""
        mean = self.mean(obs)
        rng.standard_normal(out=out, dtype=np.float32)
        out *= ACTION_STD
        out += mean
        return out
