"""Three-way decisions against an equivalence margin, with false-discovery control across one evaluation.

Per cell, with the B/A ratio's confidence interval [low, high] and margin m:

- ``pass``: high <= 1 + m (B is no more than m slower, at the interval's confidence);
- ``fail``: low > 1 + m **and** the cell's Benjamini-Hochberg q-value (over every cell of the evaluation) is
  below alpha/2, the one-sided level matching the two-sided interval. So a fail is both outside the margin and
  a discovery that survives the number of cells looked at;
- ``inconclusive`` otherwise: more rounds would decide it.

An evaluation approves only if every cell passes. That is an intersection-union test: its error rate for
approving a change with any real regression is at most that of a single cell, so passes need no multiplicity
correction, while fails (which block a merge) are controlled for false discoveries.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum

import numpy as np
from scipy.stats import false_discovery_control

from gate.stats.estimate import CONFIDENCE, Estimate


class Decision(StrEnum):
    PASS = "pass"
    FAIL = "fail"
    INCONCLUSIVE = "inconclusive"
    ERROR = "error"  # nothing to decide on: no samples, a failed benchmark, a missing machine


def q_values(p_values: Sequence[float]) -> list[float]:
    """Benjamini-Hochberg adjusted p-values (scipy), in the input's order."""
    if not len(p_values):
        return []
    return [float(q) for q in false_discovery_control(np.asarray(p_values, dtype=float), method="bh")]


def decide(estimate: Estimate, *, q_value: float, confidence: float = CONFIDENCE) -> Decision:
    threshold = 1 + estimate.margin
    if estimate.high <= threshold:
        return Decision.PASS
    if estimate.low > threshold and q_value < (1 - confidence) / 2:
        return Decision.FAIL
    return Decision.INCONCLUSIVE


def decide_all(
    estimates: Sequence[Estimate], *, confidence: float = CONFIDENCE
) -> list[tuple[Decision, float]]:
    """Decision and q-value for every estimate of one evaluation."""
    qs = q_values([e.p_slower for e in estimates])
    return [(decide(e, q_value=q, confidence=confidence), q) for e, q in zip(estimates, qs, strict=True)]
