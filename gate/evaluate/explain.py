"""A measured row's decision from its signals (``gate.stats.signals.combine``), and the reason it gives."""

from __future__ import annotations

from gate import stats
from gate.domain.vocabulary import Decision
from gate.evaluate.row import Row, join
from gate.policy import Policy
from gate.stats import signals

MOMENTS = (
    "raw times of base and head taken at different moments: on a shared machine they cannot fail a row on "
    "their own; the lockstep pass against the base decides (fusegate gate --measure)"
)


def _time_text(row: Row, policy: Policy) -> str:
    e = row.estimate
    text = f"time {e.ratio:.3f} [{e.low:.3f}, {e.high:.3f}]"
    if row.decision is Decision.FAIL:
        return text + f" slower than the {row.fail_margin:.1%} fail margin (q={row.q_value:.2g})"
    if row.decision is Decision.PASS:
        return text + f" within {row.margin:.1%}"
    if row.groups < policy.min_rounds and e.high <= 1 + row.margin:
        return (
            text
            + f" within {row.margin:.1%} but from {row.groups} process(es); a pass needs {policy.min_rounds}"
        )
    if e.low > 1 + row.fail_margin:  # above the margin in its own interval, not across the family
        return text + (
            f" above the {row.fail_margin:.1%} fail margin, but not past false-discovery control over every "
            f"cell (q={row.q_value:.2g}, {row.groups} processes)"
        )
    return text + f" straddles {row.margin:.1%} ({row.groups} processes)"


def plausible_cost(row: Row, policy: Policy) -> stats.Estimate | None:
    """The row's cost, unless it fell far while time did not: a meter that stopped counting looks like that, a
    faster kernel does not (its time falls too). Then the cost is an error of the row."""
    cost, e, floor = row.cost, row.estimate, policy.cost_plausible
    if cost is not None and cost.ratio < floor and e.ratio > 1 - (1 - floor) / 2:
        row.cost_error = (
            f"implausible: {policy.cost_metric} fell to {cost.ratio:.3f} of the comparison's while time stayed at "
            f"{e.ratio:.3f} (cost_plausible {floor:g}): check what the cost measurement counted"
        )
        return None
    return cost


def explain(row: Row, policy: Policy) -> None:
    """Combine the row's signals into its decision, name the signal that decided, say why and what next."""
    if row.estimate is None:
        return  # correctness, missing data: decided where it was found, by no measurement
    time = row.time_decision = row.decision
    time_text = _time_text(row, policy)
    cost = plausible_cost(row, policy)
    cost_decision = None if cost is None else stats.decide_exact(cost)
    out = signals.combine(
        time,
        row.estimate,
        cost=cost_decision,
        cost_error=row.cost_error,
        faster=row.faster,
    )
    row.decision, row.signal = out.decision, out.signal
    if out.decision is Decision.INCONCLUSIVE:
        time_text += "; more rounds requested" if row.groups < policy.max_rounds else "; budget exhausted"
    if row.cost_error:
        why = f"{row.cost_error}; {time_text}"
    elif cost is None:
        why = time_text
    else:
        cost_text = f"{policy.cost_metric} {cost.ratio:.4f}"
        if cost_decision is Decision.FAIL and out.decision is Decision.PASS:  # a speedup clears it
            e = row.estimate
            why = (
                f"time {e.ratio:.3f} [{e.low:.3f}, {e.high:.3f}] faster, beyond the {row.fail_margin:.1%} fail margin "
                f"(q={row.q_faster:.2g}); {policy.cost_metric} {cost.ratio - 1:+.1%}: more {policy.cost_metric} in "
                "less time is a speedup, not a regression"
            )
        elif cost_decision is Decision.FAIL and out.decision is Decision.INCONCLUSIVE:  # time questions it
            why = (
                f"{cost_text} above the {cost.fail_margin:.1%} cost margin, but {time_text}: faster than "
                f"1/(1 + {row.fail_margin:.1%}) by its estimate, not yet beyond doubt (q={1.0 if row.q_faster is None else row.q_faster:.2g}); "
                "rounds decide whether the extra instructions cost time"
            )
        elif cost_decision is Decision.FAIL:
            why = f"{cost_text} above the {cost.fail_margin:.1%} cost margin; {time_text}"
        elif time is Decision.FAIL:
            why = f"{time_text}; {cost_text} within {cost.margin:.1%}"
        elif out.decision is Decision.PASS:
            why = f"{cost_text} within {cost.margin:.1%}; {time_text}, not a fail"
        elif cost_decision is Decision.PASS:  # time questions the cost pass
            why = (
                f"{cost_text} within {cost.margin:.1%}, but {time_text}: time says slower, not passed by cost"
            )
        else:  # the runs of one commit disagree about the margin: time decides
            why = f"{cost_text} [{cost.low:.4f}, {cost.high:.4f}] undecided across runs; {time_text}"
    row.reason = join(row.reason, why)
