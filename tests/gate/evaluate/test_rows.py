"""The rules of every row kind on in-memory cells: a truth table over the time, cost and correctness states.

Each case builds one machine and placement's cells (no git, asv or store), runs one row kind's ``rows(context)``
and the tally's decisions, and checks the row's decision and deciding signal against the rule written out here
(``expected``): cost fails -> fail, unless the row's own time is faster beyond the fail margin in a design paired
in time (then pass by time); time fails -> fail (raw times of two moments: inconclusive instead); a cost
that could not be measured or is implausible -> error; cost passes -> pass unless time says slower
(inconclusive); no cost -> time decides; no time -> error; a benchmark that raised -> a correctness fail and no
row of the kind.
"""

from __future__ import annotations

import itertools

import pytest

from gate.domain.benchmarks import (
    AGAINST_BASE,
    COLLECTOR_AGAINST_BASE,
    COLLECTOR_CHECK,
    COLLECTOR_COST,
    COLLECTOR_PAIRED,
    COLLECTOR_PHASES,
    COLLECTOR_STEP,
    COST,
    PAIRED,
    TIME,
)
from gate.domain.vocabulary import Decision, Kind, Signal
from gate.evaluate import (
    best_threads,
    collector_head_vs_base,
    collector_vs_baseline,
    head_vs_base,
    impl_vs_baseline,
    paired_head_vs_base,
    tally,
)
from tests.gate.evaluate.cells import (
    BASELINE,
    COST_STATES,
    IMPL,
    TASK,
    TIME_STATES,
    Cell,
    N,
    broken,
    counted,
    judge,
    timed,
)


def with_cost(
    cells: list[Cell], state: str, costs: dict[str, str], *, base: list[Cell] | None = None
) -> None:
    """The cost cells of ``state``: B (the impl, in ``cells``) over A (the baseline in ``cells``, or the impl in
    ``base`` when given)."""
    if state == "none":
        return
    name = costs["instructions"]
    a_cells, a_impl = (base, IMPL) if base is not None else (cells, BASELINE)
    a_cells.append(counted(name, 1e6, impl=a_impl))
    if state == "failed":
        cells.append(broken(name, impl=IMPL))
    else:
        cells.append(counted(name, 1e6 * COST_STATES[state], impl=IMPL))


def expected(time: str, cost: str, *, moments: bool = False) -> tuple[Decision, Signal] | str:
    if time == "raised":
        return "correctness"
    if time in ("missing", "insufficient"):
        return Decision.ERROR, Signal.NONE
    if moments and time == "fail":  # raw times of two moments never fail: a time fail says slower, no more
        time = "says_slower"
    if cost == "fail" and time == "faster" and not moments:  # more instructions in less time: a speedup
        return Decision.PASS, Signal.TIME
    if cost == "fail" and time == "says_faster" and not moments:  # time questions the cost fail: rounds
        return Decision.INCONCLUSIVE, Signal.TIME
    if cost == "implausible" and time == "faster":  # time fell with the cost: plausible, and it passes
        return Decision.PASS, Signal.COST
    if cost == "fail":
        return Decision.FAIL, Signal.COST
    if time == "fail":
        return Decision.FAIL, Signal.TIME
    if cost in ("failed", "implausible"):
        return Decision.ERROR, Signal.COST
    if cost == "pass":
        return (Decision.INCONCLUSIVE, Signal.TIME) if time == "says_slower" else (Decision.PASS, Signal.COST)
    passes = {"pass": Decision.PASS, "faster": Decision.PASS, "says_faster": Decision.PASS}
    return passes.get(time, Decision.INCONCLUSIVE), Signal.TIME


def check(rows, kind: Kind, want) -> None:
    if want == "correctness":
        assert [(r.kind, r.decision) for r in rows] == [(Kind.CORRECTNESS, Decision.FAIL)], rows
        assert "the test says so" in rows[0].reason
        return
    [row] = [r for r in rows if r.kind == kind]
    assert (row.decision, row.signal) == want, row.reason
    assert row.reason  # every row says why
    assert not any(r.kind == Kind.CORRECTNESS for r in rows)


TIMES = [*TIME_STATES, "missing", "insufficient", "raised"]
COSTS = ["none", "pass", "fail", "failed", "implausible"]
GRID = list(itertools.product(TIMES, COSTS))


def _time_cell(benchmark: str, state: str, **where) -> list[Cell]:
    if state == "missing":
        return []
    if state in ("insufficient", "raised"):
        return [broken(benchmark, "insufficient" if state == "insufficient" else "failed", **where)]
    return [timed(benchmark, TIME_STATES[state], **where)]


@pytest.mark.parametrize(("time", "cost"), GRID)
def test_impl_vs_baseline(time, cost):
    cells = [timed(TIME, [1.0] * 5, impl=BASELINE), timed(TIME, [1.0] * 5, impl=IMPL)]
    cells += _time_cell(PAIRED, time)
    with_cost(cells, cost, COST)
    check(judge(impl_vs_baseline, cells), Kind.IMPL_VS_BASELINE, expected(time, cost))


LOCKSTEP = {
    "hot_slice": (head_vs_base, Kind.HEAD_VS_BASE, TIME, AGAINST_BASE, COST, N),
    "collector": (
        collector_head_vs_base,
        Kind.COLLECTOR_HEAD_VS_BASE,
        COLLECTOR_STEP,
        COLLECTOR_AGAINST_BASE,
        COLLECTOR_COST,
        64,
    ),
}


@pytest.mark.parametrize("suite", LOCKSTEP)
@pytest.mark.parametrize(("time", "cost"), GRID)
def test_head_vs_base_in_lockstep(time, cost, suite):
    module, kind, raw, lockstep, costs, n = LOCKSTEP[suite]
    cells, base = [timed(raw, [1.0] * 5, num_envs=n)], [timed(raw, [1.0] * 5, num_envs=n)]
    cells += _time_cell(lockstep, time, num_envs=n)
    more_head: list[Cell] = []
    more_base: list[Cell] = []
    with_cost(more_head, cost, costs, base=more_base)
    cells += [Cell(**{**c.__dict__, "num_envs": n}) for c in more_head]
    base += [Cell(**{**c.__dict__, "num_envs": n}) for c in more_base]
    rows = judge(module, cells, base, lockstep=True)
    if time == "raised":  # a lockstep pass that failed is an error of the row, not a correctness fail
        [row] = rows
        assert (row.kind, row.decision) == (kind, Decision.ERROR) and "lockstep" in row.reason
    elif time in ("missing", "insufficient"):
        # without its lockstep ratios the row falls back on the raw times of two moments
        check(rows, kind, expected("pass", cost, moments=True))
    else:
        check(rows, kind, expected(time, cost))


@pytest.mark.parametrize(
    ("time", "decision", "says"),
    [
        ("faster", Decision.PASS, "is a speedup, not a regression"),
        ("says_faster", Decision.INCONCLUSIVE, "rounds decide"),
    ],
)
def test_a_cost_fail_against_a_faster_time_says_both(time, decision, says):
    """The reason of a row whose cost fails while its lockstep time is faster names both signals and what
    happens next."""
    module, kind, raw, lockstep, costs, _ = LOCKSTEP["hot_slice"]
    cells, base = [timed(raw, [1.0] * 5), *_time_cell(lockstep, time)], [timed(raw, [1.0] * 5)]
    with_cost(cells, "fail", costs, base=base)
    [row] = [r for r in judge(module, cells, base, lockstep=True) if r.kind == kind]
    assert row.decision is decision and row.signal is Signal.TIME
    assert (
        "instructions" in row.reason and says in row.reason and f"time {row.estimate.ratio:.3f}" in row.reason
    )


@pytest.mark.parametrize("suite", list(LOCKSTEP))
@pytest.mark.parametrize("lockstep", [True, False])
def test_a_benchmark_that_failed_on_the_base_and_runs_on_the_head_is_repaired(suite, lockstep):
    """The base could not build it (the lockstep pass could not time the base either): the head repairs the
    base, nothing to time it against. A head on which it fails too is a correctness row, not a repair."""
    module, kind, raw, paired, _, n = LOCKSTEP[suite]
    base = [broken(raw, num_envs=n)]
    cells = [timed(raw, [1.0] * 5, num_envs=n)] + ([broken(paired, num_envs=n)] if lockstep else [])
    [row] = [r for r in judge(module, cells, base, lockstep=lockstep) if r.kind == kind]
    assert (row.decision, row.signal) == (Decision.PASS, Signal.REPAIRED)
    assert "failed on base" in row.reason and "the test says so" in row.reason
    rows = judge(module, [broken(raw, num_envs=n)], base, lockstep=lockstep)
    assert not [r for r in rows if r.kind == kind and r.decision is Decision.PASS]


def test_a_collector_the_base_could_not_build_is_repaired_by_its_check_alone():
    """The base's collector raised in its construction check, so its step was never timed: the check's failure
    is the base's; the head's collector step runs."""
    module, kind, raw, paired, _, n = LOCKSTEP["collector"]
    base = [broken(COLLECTOR_CHECK, num_envs=n)]
    cells = [timed(raw, [1.0] * 5, num_envs=n), broken(paired, num_envs=n)]
    [row] = [r for r in judge(module, cells, base, lockstep=True) if r.kind == kind]
    assert (row.decision, row.signal) == (Decision.PASS, Signal.REPAIRED)
    # a failed cost pass is no failure of the collector
    cost_only = [broken("cost.CollectorCost.track_instructions", num_envs=n)]
    [row] = [r for r in judge(module, cells, cost_only, lockstep=True) if r.kind == kind]
    assert row.signal is not Signal.REPAIRED
    timed_pair = [timed(raw, [1.0] * 5, num_envs=n), timed(paired, [1.0] * 5, num_envs=n)]
    [row] = [r for r in judge(module, timed_pair, base, lockstep=True) if r.kind == kind]
    assert row.signal is not Signal.REPAIRED  # the lockstep pass timed the base's kernel: it judges


@pytest.mark.parametrize(("time", "cost"), GRID)
def test_head_vs_base_from_raw_times_never_fails_by_time(time, cost):
    """Without the lockstep pass: the two commits' raw times, taken at different moments."""
    base = [timed(TIME, [1.0] * 5)]
    cells = _time_cell(TIME, time)
    with_cost(cells, cost, COST, base=base)
    rows = judge(head_vs_base, cells, base)
    if time == "missing":  # measured on base, and the head ran no timing at all: an error
        [row] = rows
        assert (row.decision, row.reason) == (Decision.ERROR, "measured on base but not on head")
    else:
        check(rows, Kind.HEAD_VS_BASE, expected(time, cost, moments=True))


@pytest.mark.parametrize(("time", "cost"), GRID)
def test_collector_vs_baseline(time, cost):
    cells = [Cell(benchmark=COLLECTOR_CHECK, impl=i, num_envs=64, center=0.0) for i in (IMPL, BASELINE)]
    cells += [
        timed(name, [10.0] * 5, impl=i, num_envs=64)
        for name in COLLECTOR_PHASES.values()
        for i in (IMPL, BASELINE)
    ]
    cells += _time_cell(COLLECTOR_PAIRED, time, num_envs=64)
    with_cost_at(cells, cost, COLLECTOR_COST, num_envs=64)
    check(judge(collector_vs_baseline, cells), Kind.COLLECTOR_VS_BASELINE, expected(time, cost))


def with_cost_at(cells, state, costs, *, num_envs):
    more: list[Cell] = []
    with_cost(more, state, costs)
    cells += [Cell(**{**c.__dict__, "num_envs": num_envs}) for c in more]


@pytest.mark.parametrize(("time", "cost"), GRID)
def test_paired_head_vs_base(time, cost):
    """The paired ratio to the baseline, head over base; its cost is the ratio of the two commits' cost ratios."""
    base = [timed(PAIRED, [1.0] * 5)]
    cells = _time_cell(PAIRED, time)
    if cost != "none":
        name = COST["instructions"]
        base += [counted(name, 1e6, impl=IMPL), counted(name, 1e6, impl=BASELINE)]
        cells.append(counted(name, 1e6, impl=BASELINE))
        cells.append(broken(name) if cost == "failed" else counted(name, 1e6 * COST_STATES[cost], impl=IMPL))
    rows = judge(paired_head_vs_base, cells, base)
    if time in ("missing", "insufficient", "raised"):
        # only commits that both have paired samples are compared; a raised one is the correctness row's
        assert [r.kind for r in rows] == ([Kind.CORRECTNESS] if time == "raised" else [])
    else:
        # the head/base of a paired ratio is an interval across commits: it fails at the margin itself
        check(rows, Kind.PAIRED_HEAD_VS_BASE, expected(time, cost))


@pytest.mark.parametrize("cost", COSTS)
@pytest.mark.parametrize("time", ["pass", "fail", "missing", "raised"])
def test_best_threads(time, cost):
    """Each at its own fastest thread count; the same count on both sides: the paired ratio decides."""
    cells = [timed(TIME, [1.0] * 5, impl=BASELINE, threads=t) for t in (1, 2)]
    cells += [timed(TIME, [2.0] * 5, impl=IMPL, threads=2)]
    if time != "missing":
        cells += _time_cell(TIME, "pass", impl=IMPL, threads=1)
        cells += _time_cell(PAIRED, time, threads=1)
    with_cost(cells, cost, COST)
    rows = judge(best_threads, cells)
    if time == "missing":  # fastest at 2 threads, where no paired ratio is: raw times across processes decide
        [row] = [r for r in rows if r.kind == Kind.BEST_THREADS]
        assert row.threads == 2 and "at 2 threads" in row.detail
        assert (row.decision, row.signal) == expected("fail", cost)
    elif (
        time == "raised"
    ):  # the paired benchmark raised: a correctness fail, and the row falls back on raw times
        assert [r.decision for r in rows if r.kind == Kind.CORRECTNESS] == [Decision.FAIL]
        [row] = [r for r in rows if r.kind == Kind.BEST_THREADS]
        assert (row.decision, row.signal) == expected("pass", cost)
    else:
        check(rows, Kind.BEST_THREADS, expected(time, cost))


@pytest.mark.parametrize(
    ("at_baselines", "at_impls", "want", "threads", "says"),
    [
        ("pass", "undecided", Decision.PASS, 2, "bounded above"),
        ("pass", "fail", Decision.FAIL, 1, "raw times"),  # bounds that contradict: the counts were wrong
        ("fail", "fail", Decision.FAIL, 1, "bounded below"),
        ("undecided", "fail", Decision.FAIL, 1, "bounded below"),
        ("fail", "pass", Decision.FAIL, 1, "raw times"),  # neither bound decides: times across processes
        ("undecided", "pass", Decision.FAIL, 1, "raw times"),
    ],
)
def test_best_threads_at_different_counts_is_bounded_by_paired_ratios(
    at_baselines, at_impls, want, threads, says
):
    """The baseline fastest at 2 threads, the implementation at 1: the paired ratio at 2 threads bounds the row
    from above (a pass decides), the one at 1 thread from below (a fail decides); raw times only when neither
    does. The raw times here say the implementation is 1.5x slower (0.9 at 1 thread against 0.6)."""
    cells = [
        timed(TIME, [0.9] * 5, impl=BASELINE, threads=1),
        timed(TIME, [0.6] * 5, impl=BASELINE, threads=2),
    ]
    cells += [timed(TIME, [0.9] * 5, impl=IMPL, threads=1), timed(TIME, [1.0] * 5, impl=IMPL, threads=2)]
    cells += [
        timed(PAIRED, TIME_STATES[at_baselines], threads=2),
        timed(PAIRED, TIME_STATES[at_impls], threads=1),
    ]
    [row] = [r for r in judge(best_threads, cells) if r.kind == Kind.BEST_THREADS]
    assert (row.decision, row.signal, row.threads) == (want, Signal.TIME, threads), row.reason
    if says == "raw times":
        assert "bounded" not in row.detail and row.estimate.design == "unpaired"
    else:
        assert says in row.detail and row.estimate.design == "paired"


def test_multi_thread_rows_carry_the_one_thread_cost():
    """The cost is measured at 1 thread and backs the same kernel and scale at every thread count."""
    cells = [timed(TIME, [1.0] * 5, impl=i, threads=2) for i in (BASELINE, IMPL)]
    cells += [timed(PAIRED, TIME_STATES["says_slower"], threads=2)]
    with_cost(cells, "pass", COST)
    [row] = judge(impl_vs_baseline, cells)
    assert row.threads == 2 and row.cost_ratio == pytest.approx(1.0)
    assert (row.decision, row.signal) == (Decision.INCONCLUSIVE, Signal.TIME)  # time says slower at 2 threads


@pytest.mark.parametrize("decisions", list(itertools.product([*Decision, None], repeat=2)))
def test_the_verdict_of_any_two_rows(decisions):
    """Any fail rejects; then any error (or no row) is an error; then any inconclusive; only all passes approve."""
    from gate.domain.vocabulary import Verdict
    from gate.evaluate.row import Row

    rows = [Row(machine="m", kind=Kind.MACHINE, decision=d) for d in decisions if d is not None]
    got = tally.verdict(rows, reasons := [])
    present = {r.decision for r in rows}
    if Decision.FAIL in present:
        want = Verdict.REJECT
    elif Decision.ERROR in present or not rows:
        want = Verdict.ERROR
    elif Decision.INCONCLUSIVE in present:
        want = Verdict.INCONCLUSIVE
    else:
        want = Verdict.APPROVE
    assert got == want and reasons[-1].startswith(str(want))


@pytest.mark.parametrize("time", ["pass", "fail", "faster", "undecided"])
def test_paired_head_vs_base_does_not_judge_an_implementation_by_a_changed_baseline(time):
    """The head changed the baseline's sources: the ratio to it moves with the baseline, so the row passes by
    ``baseline`` and asks for nothing; when only the implementation changed, the row is judged as ever."""
    base, cells = [timed(PAIRED, [1.0] * 5)], _time_cell(PAIRED, time)
    [row] = judge(paired_head_vs_base, cells, base, changed=frozenset({f"{TASK}/{BASELINE}"}))
    assert (row.decision, row.signal) == (Decision.PASS, Signal.BASELINE)
    assert "changes the baseline handwritten" in row.reason and row.estimate is None
    rows = judge(paired_head_vs_base, cells, base, changed=frozenset({f"{TASK}/{IMPL}"}))
    check(rows, Kind.PAIRED_HEAD_VS_BASE, expected(time, "none"))


def test_changed_sources_needs_every_run_to_record_the_ids():
    from gate.evaluate.evaluation import changed_sources, same_sources

    head = [{"kernels": {"t/a": "1", "t/h": "9"}}, {"kernels": {"t/a": "1", "t/h": "9"}}]
    base = [{"kernels": {"t/a": "1", "t/h": "2"}}]
    assert changed_sources(head, base) == {"t/h"} and same_sources(head, base) == {"t/a": "1"}
    assert changed_sources(head, [{}]) == frozenset()  # a run without ids: nothing is known to have changed
    assert changed_sources(head, [{"kernels": {"t/a": "1"}}]) == frozenset()  # t/h not recorded by the base


def test_an_empty_head_vs_base_list_judges_every_implementation_measured():
    """The policy's ``head_vs_base = []`` (its default) is every implementation the head or base measured: the
    same rows as naming them all."""
    from dataclasses import replace

    from tests.gate.evaluate.cells import POLICY

    module, kind, raw, lockstep, _, n = LOCKSTEP["hot_slice"]
    other = "another_impl"
    cells = [timed(raw, [1.0] * 5, num_envs=n, impl=i) for i in (IMPL, other)]
    cells += [timed(lockstep, [1.0] * 5, num_envs=n, impl=i) for i in (IMPL, other)]
    base = [timed(raw, [1.0] * 5, num_envs=n, impl=i) for i in (IMPL, other)]

    def judged(policy):
        rows = judge(module, cells, base, lockstep=True, policy=policy)
        return sorted((r.kind, r.impl, r.decision) for r in rows)

    every = judged(replace(POLICY, head_vs_base=()))
    assert every == judged(replace(POLICY, head_vs_base=(IMPL, other)))
    assert {impl for k, impl, _ in every if k == kind} >= {IMPL, other}
    assert {impl for k, impl, _ in judged(replace(POLICY, head_vs_base=(IMPL,))) if k == kind} == {IMPL}
