"""Helpers of the deterministic synthetic snapshots (spec E4) every task's ``meter.py`` makes: plausible values,
nothing within reach of a threshold.

Hot-slice benchmarks and parity checks run on these. Every discontinuity of a task (termination thresholds,
command gates, the phase wrap) is kept at least ``MARGIN`` away, so float32 rounding in different
implementations cannot flip a branch and ``done`` parity is exact. Like the tasks' ``meter.py``, this file is
the meter's, read from a pull request's base (``gate.provenance``).
"""

from __future__ import annotations

import numpy as np

MARGIN = 1e-3  # 10x the spec's 1e-4


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
