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


# time's point estimate: within the margin, between the margin and the fail margin, above the fail margin
RATIOS = {"within": 1.0, "between": 1.04, "above": 1.08}
COSTS = (None, P, F, I)


def expected(time: Decision, where: str, cost: Decision | None, error: bool) -> tuple[Decision, Signal]:
    """The rule written as a table, independently of the implementation's order of tests."""
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
    (time, where, cost, error)
    for time, where, cost, error in itertools.product((P, F, I), RATIOS, COSTS, (False, True))
    if not (error and cost is not None)  # a cost that failed to measure has no decision
    and not (time is P and where == "above")  # a pass has its interval, hence its estimate, within the margin
]


@pytest.mark.parametrize(("time", "where", "cost", "error"), CASES)
def test_combine(time, where, cost, error):
    out = combine(time, _estimate(RATIOS[where]), cost=cost, cost_error="no valgrind" if error else None)
    assert (out.decision, out.signal) == expected(time, where, cost, error)


def test_the_table_covers_every_combination():
    assert (
        len(CASES) == 3 * 3 * 5 - 5
    )  # time x estimate x (4 cost decisions + an error), less impossible passes


def test_time_questions_above_the_fail_margin_only():
    assert not time_questions(_estimate(1.05)) and time_questions(_estimate(1.0501))
