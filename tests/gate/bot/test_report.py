"""The bot's pure decisions: which status a verdict or a wait gives, and the comment's content."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from gate.api.schemas import ComparisonOut, EvaluationOut
from gate.bot import rendering, report
from gate.policy import Policy

NOW = datetime(2026, 11, 30, 12, tzinfo=UTC)
LATER, EARLIER = NOW + timedelta(hours=1), NOW - timedelta(seconds=1)


def _cell(decision: str, groups: int = 3, **kw) -> ComparisonOut:
    values = dict(
        machine="m1",
        kind="impl_vs_baseline",
        task="g1_walk",
        num_envs=4096,
        threads=2,
        impl="assembled",
        baseline="handwritten",
        detail="",
        ratio=1.02,
        low=0.99,
        high=1.05,
        margin=0.03,
        p_value=None,
        q_value=None,
        samples=groups * 40,
        groups=groups,
        decision=decision,
        reason="why | not",
    )
    return ComparisonOut(**(values | kw))


def _evaluation(verdict: str, cells: list) -> EvaluationOut:
    return EvaluationOut(
        id=1,
        base_sha="b" * 40,
        head_sha="h" * 40,
        verdict=verdict,
        policy_source="p",
        policy={},
        reasons=["r1", "last reason"],
        created_at=NOW,
        comparisons=cells,
    )


@pytest.mark.parametrize(
    ("verdict", "cells", "deadline", "state", "start"),
    [
        ("approve", [_cell("pass")], LATER, "success", "approve: all 1 cells"),
        ("reject", [_cell("fail"), _cell("pass")], LATER, "failure", "reject: 1 of 2"),
        ("error", [_cell("error", reason="no base")], LATER, "error", "error: 1 cells without data; no base"),
        (
            "inconclusive",
            [_cell("inconclusive", groups=3)],
            LATER,
            "pending",
            "inconclusive: 1 cells need more",
        ),
        (
            "inconclusive",
            [_cell("inconclusive", groups=8)],
            LATER,
            "failure",
            "inconclusive after the round budget",
        ),
        ("inconclusive", [_cell("inconclusive", groups=3)], EARLIER, "error", "inconclusive: 1 cells got no"),
    ],
)
def test_verdict_status(verdict, cells, deadline, state, start):
    status = report.verdict_status(
        _evaluation(verdict, cells), Policy(max_rounds=8), now=NOW, deadline=deadline
    )
    assert status.state == state and status.description.startswith(start), status
    assert status.settled == (state != "pending")


def test_waiting_status_names_the_missing_machines_then_errors_at_the_deadline():
    w = report.Waiting(required=("m1", "m2", "m3"), ready=("m2",))
    pending = report.waiting_status(w, now=NOW, deadline=LATER, window_s=7200)
    assert pending.state == "pending"
    assert pending.description == "waiting for 2 of 3 required machines: m1, m3 (1 reported)"
    late = report.waiting_status(w, now=NOW, deadline=EARLIER, window_s=7200)
    assert (late.state, late.description) == ("error", "no results from m1, m3 within 2 h")
    assert (
        report.waiting_status(
            report.Waiting(required=("m2",), ready=("m2",)), now=NOW, deadline=LATER, window_s=1
        )
        is None
    )
    anyone = report.waiting_status(report.Waiting(required=(), ready=()), now=NOW, deadline=LATER, window_s=1)
    assert anyone.description == "waiting for a machine to report base and head"


def test_the_comment_lists_problems_first_and_escapes_table_cells():
    cells = [_cell("pass")] * (rendering.MAX_ROWS + 5) + [_cell("fail", reason="slow | very")]
    status = report.verdict_status(_evaluation("reject", cells), Policy(), now=NOW, deadline=LATER)
    body = report.comment(
        status=status,
        base_sha="b" * 40,
        head_sha="h" * 40,
        base_ref="main",
        link="http://gate/x",
        evaluation=_evaluation("reject", cells),
        policy_source="p",
        policy_edited=True,
    )
    rows = [line for line in body.splitlines() if line.startswith("| m1 ")]
    assert len(rows) == rendering.MAX_ROWS and "**fail**" in rows[0] and "slow \\| very" in rows[0]
    assert "6 more cells (6 pass)" in body and "edits `fusegate-policy.toml`" in body
    assert body.startswith(report.MARKER) and "[Full verdict](http://gate/x)" in body


@pytest.mark.parametrize(
    ("verdict", "cells", "final", "required", "word"),
    [
        ("approve", [_cell("pass")], False, "success", ("success", "approve: all 1 cells")),
        ("reject", [_cell("fail")], False, "failure", ("failure", "reject: 1 of 1")),
        ("error", [_cell("error")], False, "error", ("error", "error: 1 cells without data")),
        (
            "inconclusive",
            [_cell("inconclusive", groups=3)],
            False,
            "pending",
            ("pending", "inconclusive: 1 cells"),
        ),
        # a CI job that ended: the required status is red, the word stays apart from a reject
        (
            "inconclusive",
            [_cell("inconclusive", groups=3)],
            True,
            "failure",
            ("pending", "inconclusive: 1 cells"),
        ),
        (
            "inconclusive",
            [_cell("inconclusive", groups=8)],
            True,
            "failure",
            ("pending", "inconclusive after"),
        ),
    ],
)
def test_the_verdict_word_tells_reject_from_inconclusive_from_error(verdict, cells, final, required, word):
    evaluation = _evaluation(verdict, cells)
    status = report.verdict_status(evaluation, Policy(max_rounds=8), now=NOW, deadline=LATER, final=final)
    beside = report.word_status(status, evaluation)
    assert status.state == required and (beside.state, beside.description[: len(word[1])]) == word
    assert status.settled == (required != "pending")


def test_the_word_of_a_wait_or_an_error_without_a_verdict():
    waiting = report.Status(
        state="pending", description="waiting for 1 of 2 required machines", settled=False
    )
    word = report.word_status(waiting)
    assert (word.state, word.description) == ("pending", "waiting for 1 of 2 required machines")
    refused = report.word_status(report.error_status("the artifact holds no asv results"))
    assert (refused.state, refused.description) == ("error", "error: the artifact holds no asv results")


def test_an_inconclusive_comment_names_the_undecided_cells_and_how_to_ask_for_rounds():
    cells = [_cell("inconclusive", groups=g, num_envs=n) for g, n in ((2, 1024), (3, 4096), (8, 8192))]
    evaluation = _evaluation("inconclusive", [*cells, _cell("pass")])
    evaluation.policy = {"max_rounds": 8}
    status = report.verdict_status(evaluation, Policy(max_rounds=8), now=NOW, deadline=LATER, final=True)
    body = report.comment(
        status=status,
        base_sha="b" * 40,
        head_sha="h" * 40,
        base_ref="main",
        link="l",
        evaluation=evaluation,
        ask="run `fusegate gate --measure`",
    )
    head = body.partition("<details>")[0]
    assert "**2 of 3 undecided cells need more rounds**" in head and "up to the policy's 8" in head
    assert "- m1 impl_vs_baseline g1_walk N=1024 2 thr assembled vs handwritten: 2 of 8 processes" in head
    assert "N=4096 2 thr assembled vs handwritten: 3 of 8 processes" in head and "N=8192" not in head
    assert "To ask for them: run `fusegate gate --measure`" in head
    spent = _evaluation("inconclusive", [cells[2]])
    spent.policy = {"max_rounds": 8}
    body = report.comment(
        status=status,
        base_sha="b" * 40,
        head_sha="h" * 40,
        base_ref="main",
        link="l",
        evaluation=spent,
        ask="never shown",
    )
    assert "with the round budget spent" in body and "never shown" not in body
    assert report.undecided_note(_evaluation("reject", [_cell("fail")]), ask="x") == []
