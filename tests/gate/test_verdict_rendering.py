"""A verdict read in ten seconds: stored evaluations of real scenarios (52 rows each) rendered as the terminal, the
PR comment and the step summary show them. The fixtures are the store's JSON of ``tools.scenarios`` runs:
``serial_loop`` (the generated kernels' env loop made serial: reject) and ``revert_serial_loop`` (its parallel
loop given back: approve)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from gate.api.schemas import EvaluationOut
from gate.bot import rendering, report
from gate.cli import output
from gate.evaluate import summary
from gate.policy import Policy

DATA = Path(__file__).parent / "data"
FIXTURES = ("serial_loop_reject.json", "revert_serial_loop_approve.json")


def load(name: str) -> EvaluationOut:
    return EvaluationOut.model_validate(json.loads((DATA / name).read_text()))


def terminal(evaluation) -> list[str]:
    return output.summary_lines(
        summary.of(evaluation), base_sha=evaluation.base_sha, head_sha=evaluation.head_sha
    )


def pr_comment(evaluation) -> str:
    now = datetime(2026, 12, 6, tzinfo=UTC)
    status = report.verdict_status(evaluation, Policy(), now=now, deadline=now + timedelta(hours=1))
    return report.comment(
        status=status,
        base_sha=evaluation.base_sha,
        head_sha=evaluation.head_sha,
        base_ref="main",
        link="https://gate.example/pr/b/h",
        evaluation=evaluation,
        policy_source=evaluation.policy_source,
        site="https://gate.example",
    )


@pytest.mark.parametrize("name", FIXTURES)
def test_the_fixture_is_a_whole_quick_profile_verdict(name):
    assert len(load(name).comparisons) == 52


def test_a_reject_fits_25_lines_of_100_columns_and_names_what_decided_it_first():
    evaluation = load("serial_loop_reject.json")
    assert evaluation.verdict == "reject"
    lines = terminal(evaluation)
    assert len(lines) <= 25 and max(map(len, lines)) <= 100, "\n".join(lines)
    s = summary.of(evaluation)
    first = s.decided[0]
    top = " ".join(lines[:3])
    assert top.startswith("reject: ") and first.what in top
    assert f"{first.worst.ratio:.2f}x" in top, top  # its ratio, in the headline
    # every fail row is in one of the findings, and the passes are counted, not listed
    failed = sum(c.decision == "fail" for c in evaluation.comparisons)
    assert sum(len(f.rows) for f in s.decided) == failed
    assert f"{s.passed} pass" in lines[1] or f"{s.passed} pass" in lines[2]


def test_an_approve_names_the_speedup_and_lists_no_pass():
    lines = terminal(load("revert_serial_loop_approve.json"))
    assert len(lines) <= 25 and max(map(len, lines)) <= 100, "\n".join(lines)
    assert lines[0].startswith("approve: ") and "faster" in lines[0]
    assert not any(line.startswith(("fail ", "open ", "error ")) for line in lines)  # nothing failed or open
    assert any(line.startswith("better ") for line in lines)  # the implementations that got faster, listed


def test_the_terminal_prints_the_summary_and_the_full_table_on_request(capsys):
    evaluation = load("serial_loop_reject.json")
    output.print_verdict(evaluation)
    short = capsys.readouterr().out.splitlines()
    assert short == terminal(evaluation)
    output.print_verdict(evaluation, rows="all")
    full = capsys.readouterr().out
    assert len(full.splitlines()) > 52 and "reason" in full


@pytest.mark.parametrize("name", FIXTURES)
def test_the_pr_comment_fits_a_narrow_column_before_its_details(name):
    evaluation = load(name)
    body = pr_comment(evaluation)
    head, _, rest = body.partition("<details>")
    shown = head.splitlines()
    assert len(shown) <= 20 and max(map(len, shown)) <= 120, head
    assert shown[1] == f"### fusegate: {evaluation.verdict}"  # the verdict's word, never GitHub's state
    assert summary.of(evaluation).headline[:60] in " ".join(shown)
    # every row is in the collapsed part, and the findings link to their dashboard cells there
    assert sum(line.startswith("| ") for line in rest.splitlines()) == 52 + 1
    for ref in {part.split("]")[0] for part in head.split("[cell][")[1:]}:
        assert f"\n[{ref}]: https://gate.example/history/" in rest


def test_the_step_summary_is_the_same_markdown_without_links_when_no_service_is_set():
    evaluation = load("serial_loop_reject.json")
    text = rendering.markdown(evaluation, heading=f"### fusegate: {evaluation.verdict}")
    comment = pr_comment(evaluation)
    assert "[cell]" not in text and "[cell]" in comment
    s = summary.of(evaluation)
    for f in s.decided[: rendering.SHOWN]:
        assert f.what in text.partition("<details>")[0]
