"""docs/measurements.md is generated from the kept records, and stays so."""

import json
import re
import sys

import pytest

from tools import report


@pytest.fixture
def records(tmp_path, monkeypatch):
    monkeypatch.setattr(report, "RECORDS", tmp_path)
    return tmp_path


def test_record_keeps_the_output_command_machine_and_date(records):
    rows = [{"task": "g1_walk", "ms": 1.23456, "threads": [1, 2], "extra": None}]
    cmd = [sys.executable, "-c", f"print({json.dumps(json.dumps(rows))})"]
    path = report.record("tool-a", "rows", "A tool's rows", cmd, note="HEAD: a comment")
    kept = json.loads(path.read_text())
    assert (
        kept["data"] == rows
        and kept["command"].startswith(sys.executable)
        and kept["note"] == "HEAD: a comment"
    )
    assert kept["machine"]["cpus"] >= 1 and len(kept["date"]) == 10
    text = report.render()
    assert "## A tool's rows" in text and "HEAD: a comment" in text
    assert "| task | ms | threads | extra |" in text and "| g1_walk | 1.235 | 1,2 | - |" in text


def test_timed_records_wall_time_and_exit_code(records):
    report.record("slow", "timed", "", [sys.executable, "-c", "import sys; sys.exit(3)"])
    assert re.search(r"\d+ s \(\d+\.\d min\), exit 3\.", report.render())


def test_a_command_without_json_is_refused(records):
    with pytest.raises(SystemExit, match="printed no JSON"):
        report.record("bad", "plan", "", [sys.executable, "-c", "print('hello')"])
    assert list(records.iterdir()) == []


def test_the_kept_file_is_what_render_writes():
    """Nobody edits docs/measurements.md by hand: it equals a fresh render of the kept records."""
    assert report.OUT.read_text() == report.render(), "run: python -m tools.report render"


def test_asvs_answers_are_rendered_with_the_rows_it_called_changed(records):
    def row(scenario, expected, actual, code, *changed):
        return {
            "run": 1,
            "scenario": scenario,
            "expected": expected,
            "actual": actual,
            "seconds": 400.0,
            "effect": False,
            "deciding": [f"asv continuous exited {code}", *changed],
            "time_fails": 0,
            "largest": "",
            "reasons": [],
        }

    data = {
        "judge": "asv continuous",
        "rows": [
            row("comment", "approve", "approve", 0),
            row(
                "serial_loop",
                "reject",
                "reject",
                1,
                "+ HotSlice('g1_walk', 'assembled', 4096, 2): 1 -> 2 (2.00)",
            ),
            row("comment", "approve", "changed", 0, "- HotSlice('g1_walk', 'numpy', 4096, 1): 2 -> 1 (0.50)"),
        ],
        "confusion": [["approve", "approve", 1], ["approve", "changed", 1], ["reject", "reject", 1]],
    }
    cmd = [sys.executable, "-c", f"print({json.dumps(json.dumps(data))})"]
    report.record("asv-a", "scenarios", "asv's way", cmd)
    text = report.render()
    assert "| comment | approve | approve, changed | 0, 0 | 400-400 | 1 |" in text
    assert "| serial_loop | reject | reject | 1 | 400-400 | 1 |" in text
    assert "- comment, head 2: `- HotSlice('g1_walk', 'numpy', 4096, 1): 2 -> 1 (0.50)`" in text


def test_the_gates_scenarios_are_rendered_by_group_with_blame_and_first_lines(records):
    def row(scenario, group, expected, actual, blamed=(), headline=""):
        return {
            "run": 1,
            "scenario": scenario,
            "expected": expected,
            "actual": actual,
            "seconds": 200.0,
            "effect": False,
            "deciding": [],
            "time_fails": 0,
            "largest": "",
            "reasons": [],
            "headline": headline,
            "group": group,
            "base": "",
            "blamed": list(blamed),
        }

    data = {
        "judge": "fusegate gate --measure",
        "rows": [
            row(
                "serial_baseline",
                "regression",
                "reject",
                "reject",
                headline="reject: g1_walk handwritten slower",
            ),
            row(
                "revert_serial_baseline",
                "improvement",
                "approve",
                "reject",
                ["head_vs_base g1_walk assembled"],
            ),
        ],
        "confusion": [["regression", "reject", "reject", 1], ["improvement", "approve", "reject", 1]],
    }
    cmd = [sys.executable, "-c", f"print({json.dumps(json.dumps(data))})"]
    report.record("gate-a", "scenarios", "the gate's way", cmd)
    text = report.render()
    assert (
        "Confusion over the scored scenarios (expected -> actual: runs): improvement approve -> reject: 1; "
        "regression reject -> reject: 1." in text
    )
    assert "Fail rows on an implementation the change does not touch: 1." in text
    assert "- revert_serial_baseline (run 1): `head_vs_base g1_walk assembled`" in text
    assert (
        "| serial_baseline | reject | reject | 200-200 | 0 | - | `reject: g1_walk handwritten slower` |"
        in text
    )


def test_records_are_grouped_by_the_question_they_answer(records):
    cmd = [sys.executable, "-c", "print('[]')"]
    report.record("z-ci", "rows", "CI's wall time", cmd, question="ci")
    report.record("a-right", "rows", "Verdicts", cmd, question="accuracy")
    text = report.render()
    order = [text.index(h) for h in ("## How right the verdicts are", "### Verdicts", "## What CI costs")]
    assert order == sorted(order) and "### CI's wall time" in text[order[-1] :]
    assert "## How long a verdict takes" not in text  # a question with no record has no section


def test_a_record_without_a_question_is_refused_by_name(records):
    (records / "old.json").write_text(
        json.dumps({"title": "t", "kind": "timed", "command": "c", "machine": {}, "date": "d", "data": {}})
    )
    with pytest.raises(SystemExit, match=r"old\.json: question None is not one of accuracy"):
        report.render()


def test_the_reference_stays_short_enough_to_read():
    """The file keeps current figures only: a new record supersedes an old one, which is deleted."""
    assert len(report.OUT.read_text().splitlines()) <= 250
