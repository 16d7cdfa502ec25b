"""Builders the tests share: asv results of a commit (times, pairs, costs, collector steps), ingest, evaluate,
upload bundles, commits in scratch repositories, a copy of this tree."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
from sqlalchemy import func, select

from gate.api.schemas import EvaluationOut
from gate.ingest import asv_dir, bundle
from gate.services.verdicts import evaluate_and_store
from gate.store import db, queries
from gate.store.models import Result, Run
from tests.gate import asv_results
from tests.gate.gitrepo import git

ROOT = Path(__file__).resolve().parents[2]

POLICY = 'compare = ["assembled"]\nmargin = 0.03\nhead_vs_base_margin = 0.05\n'


def measure_results(
    root,
    commit,
    *,
    machine="runner-1",
    slow=None,
    paired_effect=None,
    failed=frozenset(),
    skip=None,
    skip_pairs=None,
    seed=0,
    date=None,
    costs=None,
    messages=None,
    noise=0.02,
    provenance=None,
    against=None,
    lockstep_with=None,
):
    """asv results for a commit: ``slow(cell)`` multiplies times, ``paired_effect(cell)`` the impl/hand ratio,
    ``costs(cell)`` gives the cost suite's values (``asv_results.write``); ``noise`` is the times' log sigma.
    ``lockstep_with=BASE``: the commit was also timed against BASE in lockstep, with ``slow``'s effect."""
    rng = np.random.default_rng(seed)

    def times(cell):
        if cell["impl"] == "numpy" and cell["threads"] == 2:
            return None
        if skip and skip(cell):
            return None
        scale = 1e-3 * cell["num_envs"] / 4096 * (slow(cell) if slow else 1.0)
        return scale * rng.lognormal(0, noise, 50)  # 5 asv rounds of REPEAT samples

    def pairs(cell):
        if (skip and skip(cell)) or (skip_pairs and skip_pairs(cell)):
            return None
        effect = paired_effect(cell) if paired_effect else 1.0
        return [effect * rng.lognormal(0, 0.03, 40) for _ in range(5)]  # 5 processes

    if lockstep_with is not None:
        provenance = {**(provenance or {}), "against": lockstep_with}
        if against is None:
            against = lambda c: [(slow(c) if slow else 1.0) * rng.lognormal(0, 0.03, 30) for _ in range(3)]  # noqa: E731
    return asv_results.write(
        root,
        machine=machine,
        commit=commit,
        times=times,
        pairs=pairs,
        failed=failed,
        date=date,
        costs=costs,
        messages=messages,
        provenance=provenance,
        against=against,
    )


def evaluate_pair(url, repo_path, base, head, **kw) -> EvaluationOut:
    with db.transaction(url) as session:
        return EvaluationOut.model_validate(
            evaluate_and_store(session, repo=repo_path, base_sha=base, head_sha=head, **kw)
        )


def by_decision(evaluation, decision):
    return [c for c in evaluation.comparisons if c.decision == decision]


def ingest(url, results_dir):
    reports = []
    for b in asv_dir.read(results_dir):
        with db.transaction(url) as session:
            reports.append(queries.ingest_runs(session, runs=bundle.runs(b)))
    return reports


INSTRUCTIONS = {"numpy": 9e7, "handwritten": 8.3e6, "assembled": 7.6e6, "assembled_generic": 1.1e7}


def costs_of(scale=lambda cell: 1.0):
    """Per-call costs of every cell, proportional to N, ``scale(cell)`` times the default."""

    def costs(cell):
        base = INSTRUCTIONS[cell["impl"]] * cell["num_envs"] / 4096 * scale(cell)
        return {
            "instructions": base,
            "l1_misses": base / 50,
            "ll_misses": base / 60,
            "estimated_cycles": 2.3 * base,
        }

    return costs


def collector_steps(effect=lambda cell: 1.0, seed=0, processes=5):
    """Per process, 12 (hand-written, implementation) step times of ~30 ms; the implementation ``effect(cell)``
    times slower."""
    rng = np.random.default_rng(seed)

    def collector(cell):
        out = []
        for _ in range(processes):
            base = 0.03 * rng.lognormal(0, 0.05) * rng.lognormal(0, 0.02, 12)  # a process level, then pairs
            out.append(list(zip(base, base * effect(cell) * rng.lognormal(0, 0.01, 12), strict=True)))
        return out

    return collector


def collector_results(
    root, commit, *, seed=0, effect=lambda cell: 1.0, cost_scale=lambda cell: 1.0, failed=None
):
    """asv results with the collector's paired steps (``effect``) and costs (``cost_scale``) beside the hot slice's."""
    rng = np.random.default_rng(seed)
    return asv_results.write(
        root,
        machine="runner-1",
        commit=commit,
        times=lambda cell: (
            None if cell["impl"] == "numpy" and cell["threads"] == 2 else 1e-3 * rng.lognormal(0, 0.02, 50)
        ),
        pairs=lambda cell: [rng.lognormal(0, 0.03, 40) for _ in range(5)],
        costs=costs_of(),
        collector=collector_steps(effect, seed),
        collector_costs=costs_of(cost_scale),
        collector_failed=failed,
    )


def bundle_of(tmp_path, commit, **kw) -> dict:
    [b] = asv_dir.read(measure_results(tmp_path, commit, **kw))
    return b.model_dump()


def counts(url) -> tuple[int, int]:
    with db.transaction(url) as session:
        return (
            session.scalar(select(func.count()).select_from(Run)),
            session.scalar(select(func.count()).select_from(Result)),
        )


def commit_files(repo: Path, files: dict[str, str], message: str) -> str:
    for path, text in files.items():
        target = repo / path
        if text is None:
            target.unlink()
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


NARROW = {
    "FUSEGATE_BENCH_TASKS": "g1_walk",
    "FUSEGATE_BENCH_IMPLS": "numpy,handwritten,assembled",
    "FUSEGATE_BENCH_ENVS": "256",
    "FUSEGATE_BENCH_THREADS": "1,2",
    "FUSEGATE_BENCH_COLLECTOR_ENVS": "16",
    "FUSEGATE_BENCH_DUET_ROUNDS": "2",
    "FUSEGATE_BENCH_DUET_MORE": "1",
}


WHO = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@t",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@t",
}


def git_as_tester(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True, env={**os.environ, **WHO}
    ).stdout.strip()


def copy_of_this_tree(dest: Path) -> str:
    """A repository holding this tree's files (committed or not) as its one commit."""
    files = git_as_tester(ROOT, "ls-files", "-co", "--exclude-standard").splitlines()
    for name in files:
        src = ROOT / name
        if src.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)
    git_as_tester(dest, "init", "-q", "-b", "main")
    git_as_tester(dest, "add", "-A")
    git_as_tester(dest, "commit", "-q", "-m", "base")
    return git_as_tester(dest, "rev-parse", "HEAD")
