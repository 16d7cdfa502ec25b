"""From rows to a verdict: each family's decisions under false-discovery control, then the tally."""

from __future__ import annotations

from collections import Counter, defaultdict

from gate import stats
from gate.domain.vocabulary import Decision, Kind, Signal, Verdict
from gate.evaluate import tradeoff
from gate.evaluate.explain import MOMENTS, explain
from gate.evaluate.row import Row, join
from gate.policy import Policy


def decide(rows: list[Row], policy: Policy, *, extra: set[str]) -> None:
    """Every measured row's time decision and whether it is faster, with false-discovery control over its family
    for both (``--impl`` cells get their own: they can only add fails), then its signals combined (``explain``),
    then the trade-offs among them (``gate.evaluate.tradeoff``)."""
    families = defaultdict(list)
    for r in rows:
        if r.estimate is not None:
            families[r.impl in extra and r.kind != Kind.HEAD_VS_BASE].append(r)
    for family in families.values():
        estimates = [r.estimate for r in family]
        decisions = stats.decide_all(estimates, min_groups=policy.min_rounds)
        for row, (decision, q), (faster, q_faster) in zip(
            family, decisions, stats.faster_all(estimates), strict=True
        ):
            row.decision, row.q_value, row.q_faster = decision, q, q_faster
            # raw times of two moments never clear a cost fail: a fast phase of the machine can look like a speedup
            row.faster = None if row.moments else faster
            if row.moments and decision is Decision.FAIL:  # a slow phase of the machine can look like this
                row.decision = Decision.INCONCLUSIVE
                row.reason = join(row.reason, MOMENTS)
    for row in rows:
        explain(row, policy)
    tradeoff.apply(rows, policy)


def verdict(rows: list[Row], reasons: list[str]) -> Verdict:
    """The verdict of decided rows: any fail rejects, then any error (or no row) is an error, then any
    inconclusive; only every row passing approves. Appends what it counted and why to ``reasons``."""
    counts = Counter(row.decision for row in rows)
    by_signal = Counter(row.signal for row in rows)
    reasons.append(
        f"{len(rows)} cells: "
        + ", ".join(f"{counts[d]} {d}" for d in Decision if counts[d])
        + " (decided by "
        + ", ".join(f"{by_signal[s]} {s}" for s in Signal if by_signal[s])
        + ")"
    )
    if counts[Decision.FAIL]:
        reasons.append(
            "reject: a cell is slower than its margin, or a benchmark failed (parity / construction)"
        )
        return Verdict.REJECT
    if counts[Decision.ERROR] or not rows:
        errors = [r for r in rows if r.decision == Decision.ERROR]
        kinds = Counter(r.kind for r in errors)
        what = ", ".join(f"{k} {kind}" for kind, k in kinds.items()) or "no cell"
        first = f": {errors[0].reason}" if errors else ""
        reasons.append(f"error: nothing to decide on in {what}{first}; never approved on missing data")
        return Verdict.ERROR
    if counts[Decision.INCONCLUSIVE]:
        reasons.append("inconclusive: run more rounds on the machines named in the inconclusive cells")
        return Verdict.INCONCLUSIVE
    if counts[Decision.ACCEPTED]:
        reasons.append(
            f"approve: every cell is within its margin or accepted on record ({counts[Decision.ACCEPTED]} accepted)"
        )
        return Verdict.APPROVE
    reasons.append("approve: every cell is within its margin")
    return Verdict.APPROVE
