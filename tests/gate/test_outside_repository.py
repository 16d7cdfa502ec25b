"""``fusegate gate --measure`` in a team's repository that is not this one: a task package outside ``kernels/``,
declared in its pyproject's ``[tool.fusegate]`` table and nothing else, measured by the running fusegate (asv
configuration generated in ``.fusegate/``, this checkout's suites), parity-checked, cost-counted and judged head
against base. A narrowed profile (one scale, the reference and the fused kernel) keeps it to minutes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.gate.builders import git_as_tester

ROOT = Path(__file__).resolve().parents[2]
TEAM = ROOT / "tests" / "fixtures" / "teamrepo"
TASK = "cartpole_balance"
FUSED = f"teamtasks/{TASK}/fused.py"
NARROW = {
    "FUSEGATE_BENCH_TASKS": TASK,
    "FUSEGATE_BENCH_IMPLS": "numpy,fused",
    "FUSEGATE_BENCH_ENVS": "4096",
    "FUSEGATE_BENCH_THREADS": "1,2",
    "FUSEGATE_BENCH_DUET_ROUNDS": "2",
    "FUSEGATE_BENCH_DUET_MORE": "1",
}
# The head: the term sums again in a serial pass after the parallel loop (a cosine and three products more per
# env, on one thread): the same outputs, more instructions per call.
WEIGHT = '_WEIGHTS["effort"]'
PER_THREAD = """    for k in range(N_TERMS):
        total = 0.0
        for row in range(scratch.shape[0]):
            total += scratch[row, k]
        term_means[k] = total / n
"""
SERIAL = """    sums = np.zeros(N_TERMS)
    for i in range(n):  # the term sums again, on one thread
        sums[0] += math.cos(pole[i, 0])
        sums[1] += cart[i, 0] * cart[i, 0]
        sums[2] += pole[i, 1] * pole[i, 1]
        sums[3] += force[i] * force[i]
    for k in range(N_TERMS):
        term_means[k] = sums[k] / n
"""


def _team_repository(path: Path) -> str:
    """A git repository of the fixture's files (and a .gitignore of fusegate's and asv's directories): its base."""
    shutil.copytree(TEAM, path, ignore=shutil.ignore_patterns("__pycache__"))
    (path / ".gitignore").write_text(".fusegate/\n.asv/\n")
    git_as_tester(path, "init", "-q", "-b", "main")
    git_as_tester(path, "add", "-A")
    git_as_tester(path, "commit", "-q", "-m", "base: cartpole_balance with its fused kernel")
    return git_as_tester(path, "rev-parse", "HEAD")


def _gate(repo: Path, base: str, head: str, db: str) -> tuple[int, dict, str]:
    """``python -m gate.cli gate --measure`` of this checkout, run in ``repo``: (exit code, JSON, its terminal)."""
    env = {**os.environ, **NARROW, "FUSEGATE_REPO": str(repo), "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "gate.cli", "gate", "--base", base, "--head", head, "--measure"]
    done = subprocess.run(
        [*command, "--db", db, "--json", "--max-minutes", "1"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=1800,
    )
    assert done.stdout, done.stderr[-4000:]
    return done.returncode, json.loads(done.stdout), done.stderr


@pytest.mark.slow
@pytest.mark.skipif(
    shutil.which("valgrind") is None, reason="valgrind is not installed (apt-get install valgrind)"
)
def test_a_task_declared_in_a_team_repository_is_measured_checked_counted_and_judged(tmp_path):
    from gate.store import db as store
    from gate.store import queries

    repo = tmp_path / "team"
    base = _team_repository(repo)
    fused = repo / FUSED
    assert PER_THREAD in fused.read_text()
    fused.write_text(fused.read_text().replace(PER_THREAD, SERIAL, 1))
    git_as_tester(repo, "commit", "-q", "-am", "head: the term sums in a serial pass")
    head = git_as_tester(repo, "rev-parse", "HEAD")
    url = f"sqlite:///{tmp_path / 'gate.db'}"
    code, out, said = _gate(repo, base, head, url)
    rows = out["comparisons"]
    assert out["verdict"] != "error", [r["reason"] for r in rows if r["decision"] == "error"] + out["reasons"]
    assert code == {"approve": 0, "reject": 1, "inconclusive": 2}[out["verdict"]]
    # measured by this checkout's suites, configured in the team's tree
    conf = json.loads((repo / ".fusegate" / "asv.conf.json").read_text())
    assert conf["benchmark_dir"] == str(ROOT / "benchmarks") and conf["project"] == "teamkernels"
    ours = [r for r in rows if r["task"] == TASK]
    hvb = [r for r in ours if r["kind"] == "head_vs_base"]
    assert {(r["impl"], r["threads"]) for r in hvb} >= {("fused", 1), ("fused", 2)}, said[-3000:]
    # the reference is the base's: its rows pass by its sources; the fused kernel was timed and costed
    assert all(r["signal"] == "sources" and r["decision"] == "pass" for r in hvb if r["impl"] == "numpy")
    costed = [r for r in hvb if r["impl"] == "fused" and r["cost_ratio"] is not None]
    assert costed and all(r["cost_ratio"] > 1.02 for r in costed), [(r["reason"]) for r in hvb]
    assert any(r["decision"] == "fail" and r["signal"] == "cost" for r in costed)
    assert (code, out["verdict"]) == (1, "reject")
    # parity held on both commits: no correctness row, every timed cell ran after the check
    assert not [r for r in rows if r["kind"] == "correctness"]
    # the stored results name the task
    with store.transaction(url, write=False) as session:
        for sha in (base, head):
            tasks = {view.task for *_, view in queries.summaries(session, commit_sha=sha)}
            assert tasks == {TASK}, tasks
    # a head whose fused kernel departs from the reference (the effort cost's sign): a correctness row, on the
    # parity check of the base's meter.py; the base is stored, so only the head is measured
    git_as_tester(repo, "checkout", "-q", "--detach", base)
    fused.write_text(fused.read_text().replace(WEIGHT, f"-{WEIGHT}", 1))
    git_as_tester(repo, "commit", "-q", "-am", "head: the effort cost with the wrong sign")
    wrong = git_as_tester(repo, "rev-parse", "HEAD")
    code, out, said = _gate(repo, base, wrong, url)
    assert (code, out["verdict"]) == (1, "reject"), out["reasons"]
    broken = [r for r in out["comparisons"] if r["kind"] == "correctness"]
    assert {(r["task"], r["impl"], r["threads"], r["decision"]) for r in broken} == {
        (TASK, "fused", 1, "fail"),
        (TASK, "fused", 2, "fail"),
    }
    assert all("parity" in r["reason"] and "reward" in r["reason"] for r in broken), broken[0]["reason"]
