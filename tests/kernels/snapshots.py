"""Synthetic snapshots for the kernels' tests: the task's own (its ``meter.py``, spec E4), by task name."""

from __future__ import annotations

import numpy as np

from kernels import registry


def make_inputs(task: str, num_envs: int, seed: int = 0) -> dict[str, np.ndarray]:
    return registry.default().meter(task).make_inputs(num_envs, seed)
