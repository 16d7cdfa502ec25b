"""The scenario harness's changes still apply to the tree (each names text that must be there, once), and every
change builds a tree that imports."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks import scenarios

ROOT = Path(__file__).resolve().parents[2]


def _files(tmp_path: Path, *named: scenarios.Scenario) -> Path:
    """A tree holding the current copies of the files ``named`` scenarios edit."""
    for e in (e for s in named for e in s.edits):
        (tmp_path / e.path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / e.path).write_text((ROOT / e.path).read_text())
    return tmp_path


@pytest.mark.parametrize("name", list(scenarios.SCENARIOS))
def test_every_scenario_changes_text_that_is_in_its_file_once(name, tmp_path):
    s = scenarios.SCENARIOS[name]
    assert s.expected in ("approve", "reject", "error") and s.edits
    assert s.expected != "error" or s.on  # only a revert the base's meter cannot judge
    tree = _files(tmp_path, s, *([scenarios.SCENARIOS[s.on]] if s.on else []))
    if s.on:  # a revert changes the head of the scenario it undoes
        scenarios.apply(tree, scenarios.SCENARIOS[s.on], "test")
    for e in s.edits:
        text = (tree / e.path).read_text()
        assert e.old == "" or text.count(e.old) == 1, f"{name}: update the scenario to the current {e.path}"
        assert e.new not in text or e.new in e.old


def test_every_scored_regression_has_a_revert_that_restores_the_tree(tmp_path):
    regressions = [s for s in scenarios.SCENARIOS.values() if s.group == "regression" and not s.effect]
    assert {"serial_baseline", "extra_work", "hide_cost"} <= {s.name for s in regressions}
    for s in regressions:
        r = scenarios.SCENARIOS[f"revert_{s.name}"]
        want = scenarios.REVERT_EXPECTED.get(s.name, "approve")
        assert (r.on, r.expected, r.group, r.changed) == (s.name, want, "improvement", s.changed)
        tree = _files(tmp_path / s.name, s)
        before = {e.path: (tree / e.path).read_text() for e in s.edits}
        scenarios.apply(tree, s, "test")
        assert any((tree / p).read_text() != t for p, t in before.items()), s.name
        scenarios.apply(tree, r, "test")
        assert {p: (tree / p).read_text() for p in before} == before, (
            f"revert_{s.name} does not undo {s.name}"
        )


def test_only_what_a_change_touches_may_fail():
    """A fail or error row on an implementation outside the scenario's ``changed`` is blame on unchanged code;
    meter and machine rows name no implementation, and passing rows blame nothing."""
    rows = [
        {
            "decision": "fail",
            "kind": "head_vs_base",
            "task": "g1_walk",
            "impl": "handwritten",
            "num_envs": 4096,
            "threads": 2,
        },
        {
            "decision": "fail",
            "kind": "paired_head_vs_base",
            "task": "g1_walk",
            "impl": "assembled",
            "num_envs": 4096,
            "threads": 2,
        },
        {
            "decision": "error",
            "kind": "correctness",
            "task": "g1_motion",
            "impl": "assembled",
            "num_envs": 64,
            "threads": 1,
        },
        {
            "decision": "pass",
            "kind": "head_vs_base",
            "task": "g1_motion",
            "impl": "handwritten",
            "num_envs": 4096,
            "threads": 1,
        },
        {"decision": "fail", "kind": "meter", "task": "", "impl": "", "num_envs": 0, "threads": 0},
    ]
    evaluation = {"comparisons": rows}
    assert scenarios._blamed(evaluation, ("g1_walk/handwritten",)) == [
        "paired_head_vs_base g1_walk assembled N=4096 thr=2",
        "correctness g1_motion assembled N=64 thr=1",
    ]
    assert scenarios._blamed(evaluation, ("*/assembled", "g1_walk/handwritten")) == []
    assert len(scenarios._blamed(evaluation, ())) == 3  # an A/A: every fail row is blame
    assert scenarios.SCENARIOS["comment"].group == "A/A"
    assert scenarios.SCENARIOS["serial_baseline"].group == "regression"


@pytest.mark.slow
@pytest.mark.parametrize("name", [n for n, s in scenarios.SCENARIOS.items() if s.name != "docs" and not s.on])
def test_every_scenario_is_a_change_that_imports_and_generates(name, tmp_path):
    """The edited tree imports, and its generated kernels' source compiles (a scenario that broke Python would be
    a correctness failure for the wrong reason). A revert's tree is the tree before its regression
    (``test_every_scored_regression_has_a_revert_that_restores_the_tree``)."""
    tree = tmp_path / "tree"
    subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "add", "-q", "--detach", str(tree), "HEAD"], check=True
    )
    try:
        scenarios.apply(tree, scenarios.SCENARIOS[name], "test")
        code = (
            "import kernels, gate.meter.cost.worker, benchmarks.hot_slice\n"
            "from kernels.tasks.g1_walk import assembled as g1_walk\n"
            "from kernels.tasks.g1_motion import assembled as g1_motion\n"
            "from kernels import registry\n"
            "for m, t in ((g1_walk, 'g1_walk'), (g1_motion, 'g1_motion')):\n"
            "    compile(m.generate(registry.default_plan(t)), t, 'exec')\n"
        )
        done = subprocess.run(
            [sys.executable, "-c", code],
            cwd=tree,
            # the gate's profile: the suites it runs (the paired ones) are defined, so their class bodies run
            env={"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin", "FUSEGATE_BENCH_GATE": "1"},
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, done.stderr[-2000:]
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], check=False)


def test_asvs_changed_rows_are_read_from_its_table_and_nothing_else():
    """What asv continuous printed (its comparison table between progress lines) -> the rows it calls changed."""
    printed = """[100.00%] ··· hot_slice.HotSlice.time_update_state                          ok
| Change   | Before [0b91d4e8] <main~1>   | After [9918cdb5] <main>   |   Ratio | Benchmark (Parameter)  |
|----------|------------------------------|---------------------------|---------|------------------------|
| +        | 1.26±0.01ms                  | 2.41±0.02ms               |    1.91 | hot_slice.HotSlice.time_update_state('g1_walk', 'assembled', 4096, 2) |
| -        | 2.58±0.8ms                   | 1.95±0.4ms                |    0.76 | hot_slice.HotSlice.time_update_state('g1_motion', 'numpy', 4096, 1) |
|          | 2.31±0.2ms                   | 2.30±0.2ms                |    1.00 | hot_slice.HotSlice.time_update_state('g1_motion', 'handwritten', 4096, 1) |

SOME BENCHMARKS HAVE CHANGED SIGNIFICANTLY.
"""
    rows = scenarios._asv_changes(printed)
    assert rows == [
        "+ hot_slice.HotSlice.time_update_state('g1_walk', 'assembled', 4096, 2): 1.26±0.01ms -> 2.41±0.02ms (1.91)",
        "- hot_slice.HotSlice.time_update_state('g1_motion', 'numpy', 4096, 1): 2.58±0.8ms -> 1.95±0.4ms (0.76)",
    ]
    assert scenarios._asv_changes("BENCHMARKS NOT SIGNIFICANTLY CHANGED.\n") == []


def test_kept_results_name_commits_by_role():
    base, head = "a" * 40, "b" * 40
    text = f"policy at base {base[:12]}; head {head} measured; a kernel id 0123456789abcdef stays"
    assert scenarios.by_role(text, {base: "BASE", head: "HEAD"}) == (
        "policy at base BASE; head HEAD measured; a kernel id 0123456789abcdef stays"
    )


def test_a_stopped_run_keeps_its_heads_and_resume_runs_only_the_rest(tmp_path, monkeypatch):
    """Every head's result is in --out as it ends; --resume skips what the file holds, keeps it and goes on."""
    calls, stop = [], [3]

    def fake_run(number, names, *, skip, on_result, **_):
        for k, name in enumerate(names):
            if (number, k) in skip:
                continue
            calls.append((number, k))
            if len(calls) == stop[0]:
                raise KeyboardInterrupt  # the session ended mid-head
            s = scenarios.SCENARIOS[name]
            on_result(
                scenarios.Result(
                    run=number,
                    scenario=name,
                    expected=s.expected,
                    actual="approve",
                    seconds=1.0,
                    effect=False,
                    group=s.group,
                    step=k,
                )
            )

    monkeypatch.setattr(scenarios, "run_once", fake_run)
    out = tmp_path / "part.json"
    argv = ["--scenarios", "docs,comment", "--runs", "2"]
    with pytest.raises(KeyboardInterrupt):
        scenarios.main([*argv, "--out", str(out)])
    held = json.loads(out.read_text())
    assert [(r["run"], r["step"]) for r in held["rows"]] == [(1, 0), (1, 1)]
    assert held["plan"] == [[1, 0, "docs"], [1, 1, "comment"], [2, 0, "docs"], [2, 1, "comment"]]
    from benchmarks import report

    text = "\n".join(report.KINDS["scenarios"](held))
    assert "It holds 2 of the 4 heads of its plan; not run: docs (run 2), comment (run 2)." in text
    calls.clear()
    stop[0] = 0
    assert scenarios.main([*argv, "--resume", str(out)]) == 0
    assert calls == [(2, 0), (2, 1)]
    done = json.loads(out.read_text())
    assert len(done["rows"]) == 4 and done["confusion"] == [["A/A", "approve", "approve", 4]]
    with pytest.raises(SystemExit):  # another plan cannot resume this file
        scenarios.main(["--scenarios", "docs", "--resume", str(out)])
