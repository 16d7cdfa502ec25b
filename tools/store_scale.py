"""Fill a store with a synthetic fleet history, through the real ingest path, to benchmark the gate at scale.

Every run is a full-profile grid (2 tasks, 8 scales 2^11..2^18, 1 and 2 threads): 112 timing results (one
process of 20 samples each) and 64 paired results (2 processes x 40 pairs), 176 results per run, each reduced
to its summary by ``queries.ingest_runs`` exactly as a real upload is. Times drift slowly along the history.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import numpy as np

from gate.domain.benchmarks import PAIRED, TIME
from gate.domain.uploads import ResultRecord, RunRecord
from gate.domain.vocabulary import Status
from gate.store import db, queries

TASKS = ("g1_walk", "g1_motion")
IMPLS = ("numpy", "handwritten", "assembled", "assembled_generic")
NUM_ENVS = tuple(2**k for k in range(11, 19))
THREADS = (1, 2)
RESULTS_PER_RUN = 112 + 64


def sha(*parts) -> str:
    return hashlib.sha1("/".join(map(str, parts)).encode()).hexdigest()


def _run(machine: str, commit: str, index: int, rng: np.random.Generator) -> RunRecord:
    results = []
    for task in TASKS:
        for n in NUM_ENVS:
            for t in THREADS:
                for impl in IMPLS:
                    if impl == "numpy" and t == 2:
                        continue
                    scale = {"numpy": 10.0, "handwritten": 1.0, "assembled": 0.95, "assembled_generic": 2.8}[
                        impl
                    ]
                    center = scale * n * 2e-7 / t * (1 + 0.02 * np.sin(index / 7))
                    samples = (center * rng.lognormal(0, 0.05, 20)).tolist()
                    results.append(
                        ResultRecord(
                            benchmark=TIME,
                            task=task,
                            impl=impl,
                            num_envs=n,
                            threads=t,
                            status=Status.OK,
                            unit="seconds",
                            value=float(np.median(samples)),
                            samples=[samples],
                        )
                    )
                    if impl not in ("handwritten", "numpy"):
                        groups = [(scale * rng.lognormal(0, 0.05, 40)).tolist() for _ in range(2)]
                        results.append(
                            ResultRecord(
                                benchmark=PAIRED,
                                task=task,
                                impl=impl,
                                num_envs=n,
                                threads=t,
                                status=Status.OK,
                                unit="ratio",
                                value=scale,
                                samples=groups,
                            )
                        )
    placement = {
        "asked": "inherit",
        "granted": {"cpus": "0-1", "mem": "default", "threads": 2, "layer": "omp"},
    }
    return RunRecord(
        machine=machine,
        asv_machine={"machine": machine},
        fingerprint={"hostname": machine, "cpu_model": "synthetic"},
        fingerprint_hash=sha("fp", machine)[:16],
        software={"numba": "0.68.1"},
        placement=placement,
        commit=commit,
        env_name="fill",
        started_at=datetime(2026, 1, 1, tzinfo=UTC) + timedelta(hours=index),
        digest=sha("run", machine, commit),
        results=results,
    )


def fill(
    url: str,
    *,
    results: int,
    machines: int = 4,
    seed: int = 0,
    progress: Callable[[int], None] = lambda n: None,
) -> dict:
    """A history of main commits measured on every machine until ``results`` results are stored.

    Returns the commits to evaluate: ``base`` (the last main commit) and ``head`` (a PR commit on top of it,
    measured on machine 0 only, so its evaluation is one machine's grid).
    """
    db.upgrade(url)
    rng = np.random.default_rng(seed)
    stored, index = 0, 0
    base = None
    while stored + RESULTS_PER_RUN * machines <= results:
        base = sha("main", seed, index)
        with db.transaction(url) as session:
            for m in range(machines):
                queries.ingest_runs(session, runs=[_run(f"fill-{m}", base, index, rng)])
        stored += RESULTS_PER_RUN * machines
        index += 1
        progress(stored)
    head = sha("pr", seed, index)
    with db.transaction(url) as session:
        queries.ingest_runs(session, runs=[_run("fill-0", head, index, rng)])
    progress(stored + RESULTS_PER_RUN)
    return {"base": base, "head": head, "results": stored + RESULTS_PER_RUN}


def time_evaluations(
    url: str, *, repo, base: str, head: str, repeats: int, extra_impls=("assembled_generic",)
) -> dict:
    """Wall time of complete evaluations (policy read through git, queries, statistics, stored verdict)."""
    import time

    from gate import policy as policies
    from gate.evaluate import evaluate
    from gate.git import resolve

    policy_commit = resolve(repo, "HEAD")
    times, cells = [], 0
    for _ in range(repeats):
        t0 = time.perf_counter()
        policy, source = policies.read_from_base(repo, policy_commit)
        with db.transaction(url) as session:
            outcome = evaluate(
                session,
                base_sha=base,
                head_sha=head,
                policy=policy,
                policy_source=source,
                extra_impls=extra_impls,
            )
            queries.save_evaluation(
                session,
                base_sha=base,
                head_sha=head,
                verdict=str(outcome.verdict),
                policy_source=source,
                policy=outcome.policy,
                reasons=outcome.reasons,
                comparisons=outcome.comparisons,
            )
        times.append(time.perf_counter() - t0)
        cells = len(outcome.comparisons)
    ms = np.array(times) * 1e3
    return {
        "cells": cells,
        "verdict": str(outcome.verdict),
        "repeats": repeats,
        "median_ms": float(np.median(ms)),
        "p95_ms": float(np.quantile(ms, 0.95)),
        "max_ms": float(ms.max()),
    }


def fill_commits(url: str, *, seed: int = 0) -> dict:
    """The (base, head) of a store ``fill`` made: its last main commit and the PR commit on top."""
    from sqlalchemy import func, select

    from gate.store.models import Machine, Run

    with db.transaction(url) as session:
        runs = session.scalar(select(func.count(Run.id)).join(Machine).where(Machine.name == "fill-0"))
    if not runs:
        raise ValueError(f"{url} was not filled by `python -m tools store-bench` (no runs of machine fill-0)")
    return {"base": sha("main", seed, runs - 2), "head": sha("pr", seed, runs - 1)}


def _closed_form(groups: list[list[float]]) -> dict:
    """A cell summary without the bootstrap (normal approximation of the median's error): for bulk fills only."""
    logs = [np.log(np.asarray(g)) for g in groups]
    flat = np.concatenate(logs)
    center = float(np.median(flat))
    se = float(1.2533 * flat.std(ddof=1) / np.sqrt(flat.size))
    medians = [float(np.median(g)) for g in logs]
    between = float(np.std(medians, ddof=1) / np.sqrt(len(medians))) if len(medians) > 1 else 0.0
    return {
        "center": center,
        "se": se,
        "low": center - 1.96 * se,
        "high": center + 1.96 * se,
        "between_se": between,
        "samples": int(flat.size),
        "groups": len(logs),
    }


def fill_bulk(
    url: str,
    *,
    results: int,
    machines: int = 4,
    seed: int = 0,
    batch: int = 10,
    progress: Callable[[int], None] = lambda n: None,
) -> dict:
    """At least ``results`` results of the history ``fill`` makes, written in bulk: the first commit through the
    ingest path (machines,
    placements, environments), the rest as multi-row inserts of runs, results and cell summaries, the summaries
    in closed form instead of the bootstrap. About 30x faster, for stores of a million results and more."""
    from sqlalchemy import insert, select

    from gate.store.models import CellSummary, Commit, Machine, Result, Run, now

    db.upgrade(url)
    rng = np.random.default_rng(seed)
    per_commit = RESULTS_PER_RUN * machines
    first = sha("main", seed, 0)
    with db.transaction(url) as session:
        queries.ingest_runs(session, runs=[_run(f"fill-{m}", first, 0, rng) for m in range(machines)])
        ids = {name: mid for name, mid in session.execute(select(Machine.name, Machine.id))}
        template = session.execute(
            select(Run).where(Run.commit_id == queries.commit_id(session, sha=first))
        ).scalars()
        shared = {r.machine_id: (r.environment_id, r.placement_id, r.fingerprint_hash) for r in template}
    stored, index = per_commit, 1
    while stored + RESULTS_PER_RUN < results:  # the PR run below completes at least ``results``
        with db.transaction(url) as session:
            for _ in range(batch):
                if stored + RESULTS_PER_RUN >= results:
                    break
                commit = sha("main", seed, index)
                commit_id = session.execute(
                    insert(Commit).values(sha=commit).returning(Commit.id)
                ).scalar_one()
                result_rows, summary_rows = [], []
                for m in range(machines):
                    record = _run(f"fill-{m}", commit, index, rng)
                    machine_id = ids[record.machine]
                    environment_id, placement_id, fingerprint = shared[machine_id]
                    run_id = session.execute(
                        insert(Run)
                        .values(
                            machine_id=machine_id,
                            commit_id=commit_id,
                            environment_id=environment_id,
                            placement_id=placement_id,
                            env_name=record.env_name,
                            source="fill",
                            digest=record.digest,
                            fingerprint_hash=fingerprint,
                            started_at=record.started_at,
                            uploaded_at=now(),
                        )
                        .returning(Run.id)
                    ).scalar_one()
                    for r in record.results:
                        result_rows.append(
                            {
                                "run_id": run_id,
                                "benchmark": r.benchmark,
                                "task": r.task,
                                "impl": r.impl,
                                "num_envs": r.num_envs,
                                "threads": r.threads,
                                "status": r.status,
                                "unit": r.unit,
                                "value": r.value,
                                "samples": r.samples,
                            }
                        )
                        summary_rows.append(
                            {
                                "machine_id": machine_id,
                                "commit_id": commit_id,
                                "placement_id": placement_id,
                                "benchmark": r.benchmark,
                                "task": r.task,
                                "impl": r.impl,
                                "num_envs": r.num_envs or 0,
                                "threads": r.threads or 0,
                                "status": Status.OK,
                                "message": "",
                                "updated_at": now(),
                                **_closed_form(r.samples),
                            }
                        )
                session.execute(insert(Result), result_rows)
                session.execute(insert(CellSummary), summary_rows)
                stored += per_commit
                index += 1
        progress(stored)
    head = sha("pr", seed, index)
    with db.transaction(url) as session:
        queries.ingest_runs(session, runs=[_run("fill-0", head, index, rng)])
    return {"base": sha("main", seed, index - 1), "head": head, "results": stored + RESULTS_PER_RUN}
