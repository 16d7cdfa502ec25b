"""The reviewer's first line (``gate.evaluate.headline``) and the summary around it, on in-memory rows."""

from __future__ import annotations

from gate.domain.evaluations import ComparisonRecord
from gate.domain.vocabulary import Decision, Kind, Signal, Verdict
from gate.evaluate.summary import headline, summarize


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
    assert line == "reject: g1_walk handwritten 1.98x slower at 2 threads (time); nothing else changed"


def test_a_cost_fail_shows_the_instruction_ratio():
    rows = [row(threads=1, decision=Decision.FAIL, signal=Signal.COST, cost_ratio=1.036, impl="assembled")]
    assert "1.04x slower at 1 thread (instructions)" in headline(Verdict.REJECT, rows)


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
    assert line == ("approve: g1_walk handwritten 1.20-2.43x faster at 1, 2 threads; nothing else changed")


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
        "approve: g1_walk handwritten 1.82x faster at 2 threads; nothing else changed"
    )
    slow = [
        row(kind=Kind.BEST_THREADS, impl="assembled", decision=Decision.FAIL, ratio=1.5, low=1.4, high=1.6)
    ]
    assert headline(Verdict.REJECT, slow) == (
        "reject: g1_walk assembled 1.50x slower than handwritten, each at its best thread count at 2 threads "
        "(time); nothing else changed"
    )


# --- the whole summary ---------------------------------------------------------------------------------------


def test_the_summary_groups_rows_by_implementation_and_quotes_the_worst():
    rows = [
        row(threads=2, num_envs=4096, decision=Decision.FAIL, ratio=1.56, low=1.5, high=1.6),
        row(
            threads=2, num_envs=32768, decision=Decision.FAIL, ratio=1.82, low=1.75, high=1.9, detail="node0"
        ),
        row(impl="assembled", threads=1, decision=Decision.INCONCLUSIVE, ratio=1.02, groups=2),
        row(impl="assembled", threads=2, signal=Signal.COST),
        row(impl="numpy", signal=Signal.SOURCES),
    ]
    s = summarize(
        Verdict.REJECT, rows, reasons=["policy: p", "reject: 2 rows fail"], policy="p", max_rounds=8
    )
    (found,) = s.decided
    assert (found.what, found.against, found.scales, found.threads) == (
        "g1_walk handwritten",
        "the base",
        (4096, 32768),
        (2,),
    )
    assert found.how_much == "1.82x slower [1.75, 1.90] by time"
    assert found.where == "N=4096, 32768 · 2 thr · m, m node0 · 2 rows"
    (open_,) = s.undecided
    assert open_.then == "more rounds would decide (from 2 of at most 8 processes)"
    assert s.counts == "5 rows: 2 fail, 1 inconclusive, 2 pass (1 cost, 1 sources)"
    assert s.reason == "reject: 2 rows fail" and not s.improved


def test_a_cost_fail_is_quoted_by_its_instructions_and_a_spent_budget_says_so():
    rows = [
        row(
            impl="assembled",
            threads=1,
            decision=Decision.FAIL,
            signal=Signal.COST,
            cost_ratio=1.036,
            ratio=1.01,
        ),
        row(impl="numpy", decision=Decision.INCONCLUSIVE, groups=8),
    ]
    s = summarize(Verdict.REJECT, rows, max_rounds=8)
    assert s.decided[0].how_much == "instructions 1.0360x (+3.6%) by cost; time 1.01x"
    assert s.undecided[0].then == "the round budget (8 processes) is spent: inconclusive is not a pass"


def test_a_speedup_is_an_improvement_and_an_error_quotes_its_reason():
    fast = row(threads=2, ratio=0.41, low=0.34, high=0.5, cost_ratio=1.016)
    s = summarize(Verdict.APPROVE, [fast, row(threads=1)])
    assert [f.word for f in s.improved] == ["faster"] and not s.decided
    assert s.improved[0].how_much == "2.44x faster by time, head/base 0.41 [0.34, 0.50]"
    err = row(kind=Kind.MACHINE, decision=Decision.ERROR, reason="machine m did not report", ratio=None)
    (found,) = summarize(Verdict.ERROR, [err]).decided
    assert found.how_much == "machine m did not report" and found.against == "machine"


# --- trade-offs ----------------------------------------------------------------------------------------------


def _traded(decision=Decision.PASS):
    beside = "2.44x faster at 2 threads (time 0.410 [0.340, 0.500], q=0.001, 3 processes)"
    return [
        row(threads=2, ratio=0.41, low=0.34, high=0.5, cost_ratio=1.016),
        row(
            threads=1,
            decision=decision,
            signal=Signal.TRADEOFF,
            ratio=0.991,
            low=0.969,
            high=1.013,
            cost_ratio=1.016,
            reason=f"trade-off: instructions +1.6% at 1 thread, time 0.991 [0.969, 1.013] not slower, beside {beside}; "
            "passed",
        ),
    ]


def test_a_trade_off_is_named_after_the_speedup_of_its_implementation():
    assert headline(Verdict.APPROVE, _traded()) == (
        "approve: g1_walk handwritten 2.44x faster at 2 threads; trade-off: +1.6% instructions at 1 thread, "
        "time 0.99x; nothing else changed"
    )
    s = summarize(Verdict.APPROVE, _traded())
    assert [f.mark for f in s.listed] == ["better", "trade"]
    assert s.traded[0].how_much.startswith(
        "instructions +1.6%, time 0.99x [0.97, 1.01] not slower, for 2.44x"
    )


def test_a_trade_off_rejected_by_the_policy_decides_and_says_how_to_accept_it():
    rows = _traded(Decision.FAIL)
    line = headline(Verdict.REJECT, rows)
    assert line.startswith(
        "reject: g1_walk handwritten 2.44x faster at 2 threads; trade-off: +1.6% instructions"
    )
    assert 'rejected by the policy (tradeoffs = "reject")' in line
    s = summarize(Verdict.REJECT, rows)
    (found,) = s.decided
    assert found.word == "trade-off" and 'set it to "approve" on the base branch' in found.how_much
