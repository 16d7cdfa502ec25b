"""The scenario harness's changes still apply to the tree (each names text that must be there, once), and every
change builds a tree that imports."""

import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks import scenarios

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("name", list(scenarios.SCENARIOS))
def test_every_scenario_changes_text_that_is_in_its_file_once(name):
    s = scenarios.SCENARIOS[name]
    assert s.expected in ("approve", "reject") and s.edits
    for e in s.edits:
        text = (ROOT / e.path).read_text()
        assert e.old == "" or text.count(e.old) == 1, f"{name}: update the scenario to the current {e.path}"
        assert e.new not in text


@pytest.mark.slow
@pytest.mark.parametrize("name", [n for n, s in scenarios.SCENARIOS.items() if s.name != "docs"])
def test_every_scenario_is_a_change_that_imports_and_generates(name, tmp_path):
    """The edited tree imports, and its generated kernels' source compiles (a scenario that broke Python would be
    a correctness failure for the wrong reason)."""
    tree = tmp_path / "tree"
    subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "add", "-q", "--detach", str(tree), "HEAD"], check=True
    )
    try:
        scenarios.apply(tree, scenarios.SCENARIOS[name], "test")
        code = (
            "import kernels, gate.meter.cost.worker, benchmarks.hot_slice\n"
            "from kernels.assembled import g1_walk, g1_motion\n"
            "from kernels import registry\n"
            "for m, t in ((g1_walk, 'g1_walk'), (g1_motion, 'g1_motion')):\n"
            "    compile(m.generate(registry.default_plan(t)), t, 'exec')\n"
        )
        done = subprocess.run(
            [sys.executable, "-c", code],
            cwd=tree,
            env={"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin"},
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, done.stderr[-2000:]
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], check=False)
