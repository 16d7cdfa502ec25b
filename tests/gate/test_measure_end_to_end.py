"""``fusegate gate --base B --head H --measure`` end to end, as a user runs it: git -> measurement trees -> asv (the
base in its own tree, the head's subject with the base's meter, timed against the base in lockstep) -> ingest ->
verdict. A narrowed profile (one task, three implementations, one scale) keeps it to minutes; the rules
themselves are tested on stored results elsewhere."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.gate.builders import NARROW, copy_of_this_tree, git_as_tester

ROOT = Path(__file__).resolve().parents[2]


def _gate(repo: Path, base: str, head: str, db: str, *, narrow: dict = NARROW, said: list | None = None):
    """``fusegate gate --measure`` on (base, head): (exit code, the verdict's JSON); its terminal goes to
    ``said``."""
    env = {**os.environ, **narrow, "FUSEGATE_REPO": str(repo), "PYTHONPATH": str(repo)}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "gate.cli",
            "gate",
            "--base",
            base,
            "--head",
            head,
            "--measure",
            "--db",
            db,
            "--json",
            "--max-minutes",
            "1",
        ],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=1500,
    )
    assert done.stdout, done.stderr[-3000:]
    if said is not None:
        said.append(done.stderr)
    return done.returncode, json.loads(done.stdout)


@pytest.mark.slow
@pytest.mark.skipif(
    shutil.which("valgrind") is None, reason="valgrind is not installed (apt-get install valgrind)"
)
def test_a_head_that_edits_kernel_and_meter_is_measured_with_the_base_meter_in_lockstep(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    base = copy_of_this_tree(repo)
    with open(repo / "kernels" / "tasks" / "g1_walk" / "handwritten.py", "a") as f:
        f.write("\n# The same kernel: a comment to measure it again.\n")
    with open(repo / "benchmarks" / "hot_slice.py", "a") as f:
        f.write("\n# An edit of the meter: measured with the base's anyway.\n")
    git_as_tester(repo, "commit", "-q", "-am", "head: a comment in a kernel and in the meter")
    head = git_as_tester(repo, "rev-parse", "HEAD")
    db = f"sqlite:///{tmp_path / 'gate.db'}"
    code, out = _gate(repo, base, head, db)
    rows = out["comparisons"]
    assert out["verdict"] != "error", [r["reason"] for r in rows if r["decision"] == "error"] + out["reasons"]
    assert code == {"approve": 0, "reject": 1, "inconclusive": 2}[out["verdict"]]
    (meter,) = [r for r in rows if r["kind"] == "meter"]
    assert meter["decision"] == "pass" and "benchmarks/hot_slice.py" in meter["reason"]
    hvb = [r for r in rows if r["kind"] == "head_vs_base"]
    assert {(r["impl"], r["threads"]) for r in hvb} >= {
        ("handwritten", 1),
        ("handwritten", 2),
        ("assembled", 2),
    }
    # the edited kernel is timed against the base; the others run the base's sources and pass by them
    assert all("in lockstep" in r["reason"] for r in hvb if r["impl"] == "handwritten")
    same = [r for r in hvb if r["impl"] != "handwritten"]
    assert same and all(r["signal"] == "sources" and r["decision"] == "pass" for r in same)
    fails = [
        (r["kind"], r["impl"], r["num_envs"], r["threads"], r["signal"], r["reason"])
        for r in rows
        if r["decision"] == "fail"
    ]
    assert not fails  # the same code: nothing fails
    assert any(r["kind"] == "collector_head_vs_base" and "in lockstep" in r["reason"] for r in rows)
    # the head was measured in a tree of its subject and the base's meter
    tree = repo / ".fusegate" / "worktrees" / f"{head[:12]}-m{base[:12]}"
    assert "An edit of the meter" not in (tree / "benchmarks" / "hot_slice.py").read_text()
    assert (
        "a comment to measure it again"
        in (tree / "kernels" / "tasks" / "g1_walk" / "handwritten.py").read_text()
    )
    # a docs-only head on the base: nothing measured, judged on the base's results
    git_as_tester(repo, "checkout", "-q", "--detach", base)
    (repo / "README.md").write_text((repo / "README.md").read_text() + "\nA line of documentation.\n")
    git_as_tester(repo, "commit", "-q", "-am", "docs")
    docs = git_as_tester(repo, "rev-parse", "HEAD")
    code, out = _gate(repo, base, docs, db)
    assert any("nothing measured again" in r for r in out["reasons"]), out["reasons"]
    assert not (repo / ".fusegate" / "worktrees" / f"{docs[:12]}-m{base[:12]}").exists()
    # extra instructions in a generated kernel, measured in the repository's own tree (its meter is the base's):
    # what is measured is this tree's kernel, not the one the interpreter has installed
    from tools.scenarios import EXTRA_WORK

    git_as_tester(repo, "checkout", "-q", "--detach", base)
    path = repo / EXTRA_WORK.path
    path.write_text(path.read_text().replace(EXTRA_WORK.old, EXTRA_WORK.new, 1))
    git_as_tester(repo, "commit", "-q", "-am", "extra work in the assembled g1_walk kernel")
    slower = git_as_tester(repo, "rev-parse", "HEAD")
    code, out = _gate(repo, base, slower, db)
    assert (code, out["verdict"]) == (1, "reject"), out["reasons"]
    by_cost = [r for r in out["comparisons"] if r["decision"] == "fail" and r["signal"] == "cost"]
    assert {(r["kind"], r["impl"]) for r in by_cost} >= {("head_vs_base", "assembled")}
    assert all(r["cost_ratio"] > 1.02 for r in by_cost if r["kind"] == "head_vs_base")


# The previous patch release of the pinned NumPy: cp311 wheels, and in the range the pinned Numba accepts.
OTHER_NUMPY = "2.4.5"


@pytest.mark.slow
@pytest.mark.skipif(
    shutil.which("valgrind") is None, reason="valgrind is not installed (apt-get install valgrind)"
)
def test_a_head_that_bumps_a_pin_is_measured_with_its_pins_and_the_base_with_its_own(tmp_path):
    from gate.provenance import PINS, dependencies
    from gate.store import db as store
    from gate.store import queries

    repo = tmp_path / "repo"
    repo.mkdir()
    base = copy_of_this_tree(repo)
    pyproject = (repo / PINS).read_text()
    (pinned,) = [d for d in dependencies(pyproject) if d.startswith("numpy==")]
    assert pinned != f"numpy=={OTHER_NUMPY}"
    (repo / PINS).write_text(pyproject.replace(f'"{pinned}"', f'"numpy=={OTHER_NUMPY}"', 1))
    git_as_tester(repo, "commit", "-q", "-am", f"head: numpy {OTHER_NUMPY}")
    head = git_as_tester(repo, "rev-parse", "HEAD")
    url = f"sqlite:///{tmp_path / 'gate.db'}"
    said: list[str] = []
    code, out = _gate(repo, base, head, url, narrow={**NARROW, "FUSEGATE_BENCH_THREADS": "1"}, said=said)
    rows = out["comparisons"]
    assert out["verdict"] != "error", [r["reason"] for r in rows if r["decision"] == "error"] + out["reasons"]
    assert code == {"approve": 0, "reject": 1, "inconclusive": 2}[out["verdict"]]
    change = f"numpy {pinned.split('==')[1]} -> {OTHER_NUMPY}"
    assert f"head pins {change}: measured in .fusegate/envs/" in said[0], said[0][-3000:]
    # what each side's benchmark processes recorded: the head's NumPy is its pin, the base's its own
    with store.transaction(url, write=False) as session:
        ran = {
            name: {s["numpy"] for found in queries.softwares(session, commit_sha=sha).values() for s in found}
            for name, sha in (("base", base), ("head", head))
        }
    assert ran == {"base": {pinned.split("==")[1]}, "head": {OTHER_NUMPY}}
    (meter,) = [r for r in rows if r["kind"] == "meter"]
    assert meter["decision"] == "pass" and change in meter["reason"], meter["reason"]
    # the head is still compared with the base, timed against it in lockstep (its kernels' ids hold its pins)
    hvb = [r for r in rows if r["kind"] == "head_vs_base"]
    assert hvb and all(r["signal"] != "sources" for r in hvb), [r["reason"] for r in hvb]
    assert any("in lockstep" in r["reason"] for r in hvb)
