"""Three-way decisions against an equivalence margin, with false-discovery control across one evaluation.

Per cell, with the B/A ratio's confidence interval [low, high], margin m and fail margin f >= m (the machine's
A/A noise floor when that is larger than m):

- ``pass``: high <= 1 + m (B is no more than m slower, at the interval's confidence), with at least
  ``min_groups`` benchmark processes behind the interval;
- ``fail``: low > 1 + f **and** the cell's Benjamini-Hochberg q-value (over every cell of its family) is below
  alpha/2, the one-sided level matching the two-sided interval. So a fail is outside what the machine's noise
  explains and a discovery that survives the number of cells looked at;
- ``inconclusive`` otherwise: more rounds would decide it.

The noise floor only ever makes a fail harder, never a pass easier.

**Faster**, the mirror of a fail: high < 1 / (1 + f) **and** the cell's q-value for "faster" (Benjamini-Hochberg
over the same family, on ``p_faster``) below alpha/2. A faster cell passes; the flag says more than the pass: it is
the evidence that lets a significant speedup stand against a cost fail (``gate.stats.signals``), so it needs
the confidence a fail needs, not the one a pass needs.

An evaluation approves only if every cell passes. That is an intersection-union test: its error rate for
approving a change with any real regression is at most that of a single cell, so passes need no multiplicity
correction, while fails (which block a merge) are controlled for false discoveries.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from gate.domain.vocabulary import Decision
from gate.stats.estimate import CONFIDENCE, Estimate


def q_values(p_values: Sequence[float]) -> list[float]:
    """Benjamini-Hochberg adjusted p-values (scipy), in the input's order."""
    if not len(p_values):
        return []
    # scipy.stats is 1 s of imports: paid by the first evaluation, not by the service's start-up.
    from scipy.stats import false_discovery_control

    return [float(q) for q in false_discovery_control(np.asarray(p_values, dtype=float), method="bh")]


def decide(
    estimate: Estimate, *, q_value: float, min_groups: int = 1, confidence: float = CONFIDENCE
) -> Decision:
    if estimate.high <= 1 + estimate.margin and estimate.groups >= min_groups:
        return Decision.PASS
    if estimate.low > 1 + estimate.fail_margin and q_value < (1 - confidence) / 2:
        return Decision.FAIL
    return Decision.INCONCLUSIVE


def decide_exact(estimate: Estimate) -> Decision:
    """The cost signal's decision: exact counts, so no false-discovery control (a q of 0)."""
    return decide(estimate, q_value=0.0)


def faster(estimate: Estimate, *, q_faster: float, confidence: float = CONFIDENCE) -> bool:
    """Whether B is faster than A beyond the fail margin, as surely as a fail is slower."""
    return estimate.high < 1 / (1 + estimate.fail_margin) and q_faster < (1 - confidence) / 2


def decide_all(
    estimates: Sequence[Estimate], *, min_groups: int = 1, confidence: float = CONFIDENCE
) -> list[tuple[Decision, float]]:
    """Decision and q-value for every estimate of one family of cells (FDR is controlled within it)."""
    qs = q_values([e.p_slower for e in estimates])
    return [
        (decide(e, q_value=q, min_groups=min_groups, confidence=confidence), q)
        for e, q in zip(estimates, qs, strict=True)
    ]


def faster_all(estimates: Sequence[Estimate], *, confidence: float = CONFIDENCE) -> list[tuple[bool, float]]:
    """``faster`` and the q-value for "faster" of every estimate of one family, under the same false-discovery
    control as ``decide_all``'s fails."""
    qs = q_values([e.p_faster for e in estimates])
    return [(faster(e, q_faster=q, confidence=confidence), q) for e, q in zip(estimates, qs, strict=True)]
