"""The signal rule (``gate.stats.signals.combine``) as a truth table over every time / cost combination."""

from __future__ import annotations

import itertools

import pytest

from gate.stats import Decision, Estimate
from gate.stats.signals import Signal, combine, time_questions

P, F, I, E = Decision.PASS, Decision.FAIL, Decision.INCONCLUSIVE, Decision.ERROR


def _estimate(ratio: float) -> Estimate:
    return Estimate(
        ratio=ratio,
        low=ratio * 0.9,
        high=ratio * 1.1,
        p_slower=0.5,
        margin=0.03,
        fail_margin=0.05,
        design="paired",
        samples=120,
        groups=3,
    )


# time's point estimate: below 1 / (1 + the fail margin), within the margin, between the margin and the fail
# margin, above the fail margin
RATIOS = {"faster": 0.8, "within": 1.0, "between": 1.04, "above": 1.08}
COSTS = (None, P, F, I)


def expected(
    time: Decision, where: str, cost: Decision | None, error: bool, faster: bool | None = None
) -> tuple[Decision, Signal]:
    """The rule written as a table, independently of the implementation's order of tests. ``faster``: None for a
    time not paired in time (it can never clear a cost fail), else whether it is faster beyond doubt."""
    if cost is F and faster and time is P:  # a significant speedup: more instructions in less time
        return P, Signal.TIME
    if cost is F and faster is not None and where == "faster":  # time questions the cost fail: rounds
        return I, Signal.TIME
    if cost is F:
        return F, Signal.COST
    if time is F:
        return F, Signal.TIME
    if error:
        return E, Signal.COST
    if cost is P and where != "above":
        return P, Signal.COST
    if cost is P:  # time says slower: never passed by cost
        return I, Signal.TIME
    return time, Signal.TIME


CASES = [
    (time, where, cost, error, faster)
    for time, where, cost, error, faster in itertools.product(
        (P, F, I), RATIOS, COSTS, (False, True), (None, False, True)
    )
    if not (error and cost is not None)  # a cost that failed to measure has no decision
    and not (time is P and where == "above")  # a pass has its interval, hence its estimate, within the margin
    and not (time is F and where == "faster")  # a fail has its interval above the fail margin
    # faster: the interval below 1 / (1 + fail margin); a pass, or inconclusive with too few processes
    and not (faster and (where != "faster" or time is F))
]


@pytest.mark.parametrize(("time", "where", "cost", "error", "faster"), CASES)
def test_combine(time, where, cost, error, faster):
    out = combine(
        time, _estimate(RATIOS[where]), cost=cost, cost_error="no valgrind" if error else None, faster=faster
    )
    assert (out.decision, out.signal) == expected(time, where, cost, error, faster)


def test_the_table_covers_every_combination():
    # time x estimate x (4 cost decisions + an error), less impossible passes and fails; faster: pass or
    # inconclusive time, the estimate below 1 / (1 + fail margin)
    # (None: raw times; False: paired, not yet faster; True: faster)
    assert len(CASES) == 2 * (3 * 4 * 5 - 5 - 5) + 2 * 5


@pytest.mark.parametrize("threads_time", [I, P])
def test_a_cost_fail_stands_unless_the_rows_own_time_is_faster(threads_time):
    """The 1-thread row of a parallel speedup: its own time undecided (or within the margin, not faster), its
    cost failed: rejected by cost, whatever its 2-thread row shows."""
    out = combine(threads_time, _estimate(0.97), cost=F, faster=False)
    assert (out.decision, out.signal) == (F, Signal.COST)
    assert combine(P, _estimate(0.8), cost=F, faster=True).decision is P


def test_a_cost_fail_is_questioned_only_by_a_paired_time_that_says_faster():
    """Time says faster by its estimate but not yet beyond doubt (three processes): rounds, not a reject; raw
    times of two moments never question a cost fail; an estimate within the margin does not either."""
    out = combine(I, _estimate(0.885), cost=F, faster=False)
    assert (out.decision, out.signal) == (I, Signal.TIME)
    assert combine(I, _estimate(0.885), cost=F, faster=None).decision is F
    assert combine(P, _estimate(1 / 1.05 + 1e-9), cost=F, faster=False).decision is F
    assert combine(P, _estimate(1 / 1.05 - 1e-9), cost=F, faster=False).decision is I


def test_time_questions_above_the_fail_margin_only():
    assert not time_questions(_estimate(1.05)) and time_questions(_estimate(1.0501))
