"""The trade-off rule (``gate.evaluate.tradeoff``) as a truth table on in-memory cells: a head-vs-base row whose
cost fails while its own time is not slower, beside the same kernel and scale at another thread count."""

from __future__ import annotations

from dataclasses import replace

import pytest

from gate.domain.benchmarks import AGAINST_BASE, COST, TIME
from gate.domain.vocabulary import Decision, Signal
from gate.evaluate import head_vs_base
from gate.policy import Policy
from tests.gate.evaluate.cells import BASELINE, IMPL, POLICY, TIME_STATES, Cell, counted, judge, timed

N = 4096


def _cells(one: str, two: str, *, two_paired: bool = True, two_impl: str = IMPL, two_n: int = N, cost=1.2):
    """Head and base cells of the implementation at 1 thread (lockstep state ``one``) and of ``two_impl`` at
    ``two_n`` envs and 2 threads (state ``two``; ``two_paired=False``: raw times of two moments only), with the
    head's 1-thread instructions ``cost`` times the base's."""
    head = [timed(TIME, [1.0] * 5, threads=1), timed(AGAINST_BASE, TIME_STATES[one], threads=1)]
    base = [timed(TIME, [1.0] * 5, threads=1)]
    at2 = {"impl": two_impl, "num_envs": two_n, "threads": 2}
    base.append(timed(TIME, [1.0] * 5, **at2))
    if two_paired:
        head += [timed(TIME, [1.0] * 5, **at2), timed(AGAINST_BASE, TIME_STATES[two], **at2)]
    else:
        head.append(timed(TIME, TIME_STATES[two], **at2))
    for impl, n in {(IMPL, N), (two_impl, two_n)}:
        base.append(counted(COST["instructions"], 1e6, impl=impl, num_envs=n))
        head.append(counted(COST["instructions"], 1e6 * cost, impl=impl, num_envs=n))
    return head, base


def _judge(head: list[Cell], base: list[Cell], policy: Policy = POLICY):
    return judge(head_vs_base, head, base, policy=policy, lockstep=True)


def _row(rows, *, threads: int, impl: str = IMPL, n: int = N):
    [row] = [r for r in rows if (r.threads, r.impl, r.num_envs) == (threads, impl, n)]
    return row


# (1-thread time, 2-thread time, policy's tradeoffs) -> the 1-thread row's (decision, signal), independently of
# the rule's order of tests: a cost fail whose own time is not slower is a trade-off beside a proven speedup,
# pending beside a speedup not yet beyond doubt, and a fail by cost otherwise or under "reject" without one.
CASES = [
    ("pass", "faster", "approve", (Decision.PASS, Signal.TRADEOFF)),
    ("pass", "faster", "reject", (Decision.FAIL, Signal.TRADEOFF)),
    ("undecided", "faster", "approve", (Decision.FAIL, Signal.COST)),  # its interval's top above 1 + f
    ("pass", "says_faster", "approve", (Decision.INCONCLUSIVE, Signal.TRADEOFF)),
    ("pass", "says_faster", "reject", (Decision.FAIL, Signal.COST)),
    ("pass", "pass", "approve", (Decision.FAIL, Signal.COST)),  # faster nowhere: the +1% time cannot see
    ("pass", "undecided", "approve", (Decision.FAIL, Signal.COST)),
    ("says_slower", "faster", "approve", (Decision.FAIL, Signal.COST)),  # its own time is not below 1 + f
    ("fail", "faster", "approve", (Decision.FAIL, Signal.COST)),  # a time fail is never a trade-off
]


@pytest.mark.parametrize(("one", "two", "tradeoffs", "want"), CASES)
def test_a_cost_fail_beside_another_thread_count(one, two, tradeoffs, want):
    rows = _judge(*_cells(one, two), replace(POLICY, tradeoffs=tradeoffs))
    row = _row(rows, threads=1)
    assert (row.decision, row.signal) == want, row.reason
    if row.signal is Signal.TRADEOFF and row.decision is not Decision.INCONCLUSIVE:
        # the reason names both sides: the instructions here, the speedup there
        assert "instructions +20.0% at 1 thread" in row.reason and "faster at 2 threads" in row.reason
    if tradeoffs == "reject" and row.signal is Signal.TRADEOFF:
        assert 'set tradeoffs = "approve"' in row.reason
    if row.decision is Decision.INCONCLUSIVE:
        assert "rounds for 2 threads decide" in row.reason


@pytest.mark.parametrize(
    "other",
    [
        {"two_impl": BASELINE},  # another implementation's speedup
        {"two_n": 32768},  # another scale's
        {"two_paired": False},  # raw times of two moments: never faster
    ],
)
def test_a_speedup_elsewhere_is_no_trade_off(other):
    rows = _judge(*_cells("pass", "faster", **other))
    row = _row(rows, threads=1)
    assert (row.decision, row.signal) == (Decision.FAIL, Signal.COST), row.reason


def test_a_pending_trade_off_at_the_budget_fails_by_cost_and_says_so():
    """With the sibling's rounds spent, the cost fail stands and the reason says the trade-off was not shown."""
    policy = replace(
        POLICY, max_rounds=5, min_rounds=2
    )  # the cells have 5 processes each: the budget is spent
    rows = _judge(*_cells("pass", "says_faster"), policy)
    row = _row(rows, threads=1)
    assert (row.decision, row.signal) == (Decision.FAIL, Signal.COST)
    assert "the trade-off could not be shown" in row.reason


def test_the_speedup_itself_passes_by_time():
    rows = _judge(*_cells("pass", "faster"))
    row = _row(rows, threads=2)
    assert (row.decision, row.signal) == (Decision.PASS, Signal.TIME), row.reason


def test_the_rounds_of_a_pending_trade_off_go_to_its_sibling_first():
    from gate.runner import rounds

    rows = [r.record() for r in _judge(*_cells("pass", "says_faster"))]
    chosen = rounds.open_benches(rows, Policy(max_rounds=8, baseline=BASELINE))
    assert chosen and chosen[0].threads == 2 and "AgainstBase" in chosen[0].benchmark, chosen
    assert any(s.threads == 1 for s in chosen)
