"""Deterministic synthetic snapshots (spec E4): plausible values, nothing within reach of a threshold.

Hot-slice benchmarks and parity checks run on these. Every discontinuity of a task (termination thresholds,
command gates, the phase wrap) is kept at least ``MARGIN`` away, so float32 rounding in different
implementations cannot flip a branch and ``done`` parity is exact.
"""

from __future__ import annotations

import numpy as np

MARGIN = 1e-3  # 10x the spec's 1e-4
TASKS = ("g1_walk", "g1_motion")  # the tasks this meter can make snapshots of


def make_inputs(task: str, num_envs: int, seed: int = 0) -> dict[str, np.ndarray]:
    """A deterministic synthetic snapshot of ``task`` (spec E4): its input and state arrays, by spec E name."""
    if isinstance(num_envs, bool) or not isinstance(num_envs, int | np.integer) or num_envs < 1:
        raise ValueError(f"num_envs must be a positive integer, got {num_envs!r}")
    if task == "g1_walk":
        from gate.meter.synthetic.g1_walk import make_walk_inputs

        return make_walk_inputs(int(num_envs), seed)
    if task == "g1_motion":
        from gate.meter.synthetic.g1_motion import make_motion_inputs

        return make_motion_inputs(int(num_envs), seed)
    raise ValueError(f"unknown task {task!r}; known tasks: {', '.join(TASKS)}")


def keep_away(x: np.ndarray, threshold: float, margin: float = MARGIN) -> np.ndarray:
    """Move values closer than ``margin`` to ``threshold`` out to ``2 * margin`` on their own side."""
    side = np.where(x >= threshold, 1.0, -1.0)
    return np.where(np.abs(x - threshold) < margin, threshold + 2 * margin * side, x)


def keep_norm_away(v: np.ndarray, threshold: float, margin: float = MARGIN) -> np.ndarray:
    """Rescale rows of ``v`` whose Euclidean norm is within ``margin`` of ``threshold`` (zero rows stay zero)."""
    norm = np.linalg.norm(v, axis=-1, keepdims=True)
    target = keep_away(norm, threshold, margin)
    scale = np.divide(target, norm, out=np.ones_like(norm), where=norm > 0)
    return v * scale
