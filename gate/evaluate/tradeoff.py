"""Trade-offs: a cost fail beside a proven speedup of the same kernel at another thread count.

A row's cost is the 1-thread instruction count of its kernel and scale; a parallel loop, a parallel reduction or
a vectorised loop often runs more instructions and takes less time. Row by row, the +1.6% instructions of a
kernel given back its parallel loop and the +1.35% of a change whose extra work time cannot see look the same at
1 thread: what tells them apart is the rest of the same kernel. So, over a family of decided rows, with f a
row's fail margin:

| the row | a sibling (same machine, placement, kind, task, implementation, baseline, scale; other threads) | the row |
|---|---|---|
| cost fails, time not slower: no time fail and high <= 1 + f | *faster* (``gate.stats.faster``: whole interval below 1/(1+f), q < alpha/2, paired in time) | **trade-off**: pass (``tradeoffs = "approve"``) or fail (``"reject"``), signal ``tradeoff`` |
| the same | none faster; one whose estimate says faster (below 1/(1+f), paired in time) and whose rounds the budget allows | **inconclusive**, signal ``tradeoff``: rounds go to that sibling first |
| the same | the same, with the budget spent | fail by cost: the trade-off could not be shown |
| the same | none says faster, or only raw times of two moments | fail by cost |
| time fails, or high > 1 + f | any | unchanged (fail) |

Under ``tradeoffs = "reject"`` the rule does not wait: the row fails whatever its siblings, and says when a proven
speedup stands beside it. Either way the row's reason names both sides.

What it bounds: a trade-off passes a row whose cost fails, so what it can let through is an instruction increase
at one thread count whose own time lies below the time fail margin (high <= 1 + f, the bound a time pass has) beside
a proven speedup of the same kernel and scale at another thread count; the chance that the speedup is a false one
is the *faster* test's (below alpha/2 per row, Benjamini-Hochberg over the family). A +1% change that time cannot
see is faster nowhere, so it stays rejected; a pending row only ever turns a reject into an inconclusive, which
never approves.
"""

from __future__ import annotations

from collections import defaultdict

from gate.domain.vocabulary import Decision, Signal
from gate.evaluate.row import Row, join
from gate.policy import Policy
from gate.stats import signals

UNSHOWN = "the trade-off could not be shown"  # said by a cost fail whose pending trade-off ran out of rounds


# What a row and its siblings share: everything but the thread count.
FAMILY = ("machine", "kind", "detail", "task", "impl", "baseline", "num_envs")


def family(r) -> tuple:
    """The row's (a ``Row`` or a stored ``ComparisonRecord``) fields its siblings share."""
    return tuple(getattr(r, f) for f in FAMILY)


def candidate(r: Row) -> bool:
    """A row failed by its cost alone whose own time is not slower: no time fail, its interval's top at most
    1 + its fail margin."""
    e = r.estimate
    return (
        r.decision is Decision.FAIL
        and r.signal is Signal.COST
        and r.cost is not None
        and e is not None
        and r.time_decision is not Decision.FAIL
        and e.high <= 1 + e.fail_margin
    )


def proven(s: Row) -> bool:
    """A sibling faster beyond doubt: the strict test, paired in time, and the row itself passed."""
    return bool(s.faster) and s.decision is Decision.PASS


def pending(s: Row) -> bool:
    """A sibling paired in time whose estimate says faster, not yet beyond doubt."""
    return (
        s.faster is False
        and s.estimate is not None
        and s.decision is not Decision.FAIL
        and signals.time_says_faster(s.estimate)
    )


def _cost(r: Row, metric: str) -> str:
    return f"{metric} {r.cost.ratio - 1:+.1%} at {r.threads} thread{'s' if r.threads != 1 else ''}"


def _time(r: Row) -> str:
    e = r.estimate
    return f"time {e.ratio:.3f} [{e.low:.3f}, {e.high:.3f}]"


def _speedup(s: Row) -> str:
    e = s.estimate
    q = "" if s.q_faster is None else f", q={s.q_faster:.2g}"
    return (
        f"{1 / e.ratio:.2f}x faster at {s.threads} thread{'s' if s.threads != 1 else ''} "
        f"({_time(s)}{q}, {s.groups} processes)"
    )


def apply(rows: list[Row], policy: Policy) -> None:
    """Decide the trade-offs among decided ``rows``, in place."""
    families: dict[tuple, list[Row]] = defaultdict(list)
    for r in rows:
        if r.estimate is not None and r.threads is not None:
            families[family(r)].append(r)
    for group in families.values():
        for r in group:
            if not candidate(r):
                continue
            siblings = [s for s in group if s.threads != r.threads]
            shown = sorted((s for s in siblings if proven(s)), key=lambda s: s.estimate.ratio)
            here = f"{_cost(r, policy.cost_metric)}, {_time(r)} not slower"
            if shown:
                r.signal = Signal.TRADEOFF
                if policy.tradeoffs == "approve":
                    r.decision = Decision.PASS
                    r.reason = join(
                        r.reason,
                        f"trade-off: {here}, beside {_speedup(shown[0])}; passed by the policy's "
                        'tradeoffs = "approve"',
                    )
                else:
                    r.reason = join(
                        r.reason,
                        f"trade-off: {here}, beside {_speedup(shown[0])}; failed by the policy's "
                        'tradeoffs = "reject": to accept it, set tradeoffs = "approve" in '
                        "fusegate-policy.toml on the base branch first",
                    )
                continue
            if policy.tradeoffs != "approve":
                continue
            waiting = sorted((s for s in siblings if pending(s)), key=lambda s: s.estimate.ratio)
            if not waiting:
                continue
            s = waiting[0]
            if s.groups < policy.max_rounds:
                r.decision, r.signal = Decision.INCONCLUSIVE, Signal.TRADEOFF
                r.reason = join(
                    r.reason,
                    f"a trade-off if proven: {here}, and at {s.threads} threads {_time(s)} says faster, not yet "
                    f"beyond doubt ({s.groups} processes): rounds for {s.threads} threads decide",
                )
            else:
                r.reason = join(
                    r.reason,
                    f"{UNSHOWN}: at {s.threads} threads {_time(s)} is still not faster "
                    f"beyond doubt with the budget of {policy.max_rounds} processes spent; the cost fail stands",
                )
