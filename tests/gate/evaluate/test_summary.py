"""The reviewer's first line (``gate.evaluate.summary.headline``) on in-memory rows."""

from __future__ import annotations

from gate.domain import ComparisonRecord, Decision, Kind, Signal, Verdict
from gate.evaluate.summary import headline


def row(
    kind=Kind.HEAD_VS_BASE, impl="handwritten", threads=2, decision=Decision.PASS, **kw
) -> ComparisonRecord:
    values = dict(
        machine="m",
        kind=kind,
        task="g1_walk",
        num_envs=4096,
        threads=threads,
        impl=impl,
        baseline="base" if kind == Kind.HEAD_VS_BASE else "handwritten",
        detail="",
        ratio=1.0,
        low=0.98,
        high=1.02,
        margin=0.05,
        p_value=0.5,
        q_value=0.5,
        samples=60,
        groups=3,
        decision=decision,
        signal=Signal.TIME,
        cost_ratio=1.0,
        reason="why",
    )
    return ComparisonRecord(**{**values, **kw})


def test_a_reject_names_the_implementation_its_threads_and_ratio_first():
    rows = [
        row(threads=2, decision=Decision.FAIL, ratio=1.98, low=1.9, high=2.05),
        row(threads=1, impl="assembled"),
        row(threads=2, impl="assembled"),
    ]
    line = headline(Verdict.REJECT, rows)
    assert (
        line
        == "reject: g1_walk handwritten slower than the base at 2 threads (1.98x, time); nothing else changed"
    )


def test_a_cost_fail_shows_the_instruction_ratio():
    rows = [row(threads=1, decision=Decision.FAIL, signal=Signal.COST, cost_ratio=1.036, impl="assembled")]
    assert "(1.04x, instructions)" in headline(Verdict.REJECT, rows)


def test_an_approved_speedup_is_named_with_its_span():
    rows = [
        row(threads=1, ratio=0.834, low=0.80, high=0.869, cost_ratio=1.016),
        row(threads=2, ratio=0.411, low=0.341, high=0.495, cost_ratio=1.016),
        row(impl="assembled", threads=2),
        row(
            kind=Kind.PAIRED_HEAD_VS_BASE,
            impl="assembled",
            signal=Signal.BASELINE,
            ratio=None,
            low=None,
            high=None,
        ),
    ]
    line = headline(Verdict.APPROVE, rows)
    assert line == (
        "approve: g1_walk handwritten faster than the base at 1, 2 threads (0.41-0.83x); nothing else changed"
    )


def test_an_approve_with_nothing_changed_counts_its_rows():
    assert (
        headline(Verdict.APPROVE, [row(), row(threads=1)]) == "approve: every row within its margin (2 rows)"
    )


def test_a_reject_with_undecided_rows_elsewhere_does_not_say_nothing_else_changed():
    rows = [row(decision=Decision.FAIL, ratio=1.5), row(impl="assembled", decision=Decision.INCONCLUSIVE)]
    assert headline(Verdict.REJECT, rows).endswith("; 1 row undecided")


def test_inconclusive_and_error_say_what_is_open():
    rows = [row(impl="assembled", decision=Decision.INCONCLUSIVE, threads=t) for t in (1, 2)]
    assert headline(Verdict.INCONCLUSIVE, rows) == (
        "inconclusive: undecided g1_walk assembled at 1, 2 threads (2 rows); more rounds would decide"
    )
    err = row(kind=Kind.MACHINE, decision=Decision.ERROR, reason="machine m did not report")
    assert headline(Verdict.ERROR, [err]) == "error: machine m did not report"


def test_a_correctness_fail_names_the_check():
    rows = [
        row(kind=Kind.CORRECTNESS, impl="assembled", decision=Decision.FAIL, reason="parity: obs differs")
    ]
    assert headline(Verdict.REJECT, rows).startswith(
        "reject: g1_walk assembled correctness: parity: obs differs"
    )


def test_a_head_that_repairs_the_base_says_what_runs_again():
    rows = [
        row(
            kind=Kind.COLLECTOR_HEAD_VS_BASE, impl="assembled", threads=1, signal=Signal.REPAIRED, ratio=None
        ),
        row(threads=1),
    ]
    assert headline(Verdict.APPROVE, rows) == (
        "approve: g1_walk assembled collector step runs again (it failed on the base); nothing else changed"
    )


def test_a_speedup_passed_by_cost_is_named_by_its_time_and_best_threads_say_so():
    """Fewer instructions passed the row; the line says how much faster it runs, not the instruction ratio."""
    rows = [row(threads=2, signal=Signal.COST, ratio=0.55, low=0.5, high=0.6, cost_ratio=0.99)]
    assert headline(Verdict.APPROVE, rows) == (
        "approve: g1_walk handwritten faster than the base at 2 threads (0.55x); nothing else changed"
    )
    slow = [
        row(kind=Kind.BEST_THREADS, impl="assembled", decision=Decision.FAIL, ratio=1.5, low=1.4, high=1.6)
    ]
    assert headline(Verdict.REJECT, slow) == (
        "reject: g1_walk assembled slower than handwritten, each at its best thread count at 2 threads "
        "(1.50x, time); nothing else changed"
    )
