"""Measurements in: validated runs stored, each touched (machine, commit, placement) summarized again."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from gate import stats
from gate.domain.benchmarks import COST_BENCHMARKS, STATUS_ONLY
from gate.domain.uploads import RunRecord
from gate.domain.vocabulary import Status
from gate.store.models import CellSummary, Commit, Environment, Machine, Placement, Result, Run, now
from gate.store.queries.keys import content_hash, get_or_create


def placement_label(placement: dict) -> str:
    """Where a run's processes ran. ``pool`` is the Numba thread pool the placement granted; each cell's own
    thread count is its ``threads`` (a 1-thread cell runs in a process whose pool has 2)."""
    granted = placement.get("granted") if isinstance(placement.get("granted"), dict) else {}
    label = (
        f"cpus={granted.get('cpus')} mem={granted.get('mem')} "
        f"pool={granted.get('threads')} layer={granted.get('layer')}"
    )
    return label if len(label) <= 200 else label[:197] + "..."  # the column's width; the hash is the identity


@dataclass(frozen=True, kw_only=True)
class IngestReport:
    stored: int  # runs new or replaced
    unchanged: int  # runs already stored with the same content
    results: int  # result rows written


def ingest_runs(session: Session, *, runs: Sequence[RunRecord]) -> IngestReport:
    """Store validated runs in the caller's transaction; identical content is stored once.

    A run is keyed by (machine, commit, asv environment, placement). asv rewrites a commit's result file when it
    measures it again, so a changed file replaces the run's results instead of adding to them.
    """
    stored = unchanged = written = 0
    touched: set[tuple[int, int, int]] = set()
    for record in sorted(runs, key=lambda r: (r.machine, r.commit)):  # one lock order for every upload
        machine_id = get_or_create(
            session,
            Machine,
            key={"name": record.machine},
            values={
                "fingerprint_hash": record.fingerprint_hash,
                "fingerprint": record.fingerprint,
                "asv_machine": record.asv_machine,
            },
        )
        # Lock the machine's row: uploads of one machine are serialised (PostgreSQL; SQLite serialises all writers).
        machine = session.scalar(select(Machine).where(Machine.id == machine_id).with_for_update())
        machine.last_seen = now()
        machine.fingerprint, machine.fingerprint_hash = record.fingerprint, record.fingerprint_hash
        environment_id = get_or_create(
            session,
            Environment,
            key={"hash": content_hash(record.software)},
            values={"software": record.software},
        )
        placement_id = get_or_create(
            session,
            Placement,
            key={"hash": content_hash(record.placement)},
            values={"placement": record.placement, "label": placement_label(record.placement)},
        )
        commit_id = get_or_create(session, Commit, key={"sha": record.commit})
        key = {
            "machine_id": machine_id,
            "commit_id": commit_id,
            "env_name": record.env_name,
            "placement_id": placement_id,
        }
        run = session.scalar(select(Run).filter_by(**key))
        if run is not None and run.digest == record.digest:
            unchanged += 1
            continue
        if run is None:
            run = Run(
                **key,
                environment_id=environment_id,
                source="asv",
                digest=record.digest,
                fingerprint_hash=record.fingerprint_hash,
                started_at=record.started_at,
            )

            session.add(run)
            session.flush()
        else:
            session.execute(delete(Result).where(Result.run_id == run.id))
        run.digest, run.started_at, run.environment_id, run.uploaded_at = (
            record.digest,
            record.started_at,
            environment_id,
            now(),
        )
        run.fingerprint_hash = record.fingerprint_hash
        run.provenance = record.provenance or None
        session.add_all(
            Result(
                run_id=run.id,
                benchmark=r.benchmark,
                task=r.task,
                impl=r.impl,
                num_envs=r.num_envs,
                threads=r.threads,
                status=r.status,
                unit=r.unit,
                value=r.value,
                samples=r.samples,
                message=r.message,
            )
            for r in record.results
        )
        written += len(record.results)
        stored += 1
        touched.add((machine_id, commit_id, placement_id))
    session.flush()
    for machine_id, commit_id, placement_id in touched:
        summarize_cells(session, machine_id=machine_id, commit_id=commit_id, placement_id=placement_id)
    return IngestReport(stored=stored, unchanged=unchanged, results=written)


def summarize_cells(session: Session, *, machine_id: int, commit_id: int, placement_id: int) -> int:
    """Recompute the summaries of one (machine, commit, placement) from every run's samples."""
    rows = session.execute(
        select(Result)
        .join(Run)
        .where(Run.machine_id == machine_id, Run.commit_id == commit_id, Run.placement_id == placement_id)
    ).scalars()
    cells: dict[tuple, list[Result]] = defaultdict(list)
    for r in rows:
        cells[(r.benchmark, r.task, r.impl, r.num_envs or 0, r.threads or 0)].append(r)
    session.execute(
        delete(CellSummary).where(
            CellSummary.machine_id == machine_id,
            CellSummary.commit_id == commit_id,
            CellSummary.placement_id == placement_id,
        )
    )
    for (benchmark, task, impl, num_envs, threads), results in cells.items():
        summary = CellSummary(
            machine_id=machine_id,
            commit_id=commit_id,
            placement_id=placement_id,
            benchmark=benchmark,
            task=task,
            impl=impl,
            num_envs=num_envs,
            threads=threads,
        )
        failed = [r for r in results if r.status == Status.FAILED]
        groups = [g for r in results for g in r.samples]
        if failed and benchmark in COST_BENCHMARKS:
            summary.status = Status.FAILED
            summary.message = next((r.message for r in failed if r.message), "") or (
                "the cost pass raised in asv (a kernel that fails under callgrind, or no valgrind on the runner: "
                "apt-get install valgrind); asv's output names the exception"
            )
        elif failed:
            summary.status = Status.FAILED
            summary.message = next((r.message for r in failed if r.message), "") or (
                "the benchmark raised (parity or construction failure) in asv; asv's output names the exception"
            )
        elif benchmark in STATUS_ONLY:  # passed: nothing to summarize (the value stays in the results)
            summary.status, summary.samples, summary.groups = Status.OK, len(results), len(results)
        elif benchmark in COST_BENCHMARKS:  # exact: one value per run, no samples to bootstrap
            try:
                _fill(summary, stats.exact([r.value for r in results]))
            except stats.InsufficientData as exc:
                summary.status, summary.message = Status.INSUFFICIENT, str(exc)
        elif not groups:
            summary.status = Status.INSUFFICIENT
            summary.message = "no samples recorded (run asv with --record-samples)"
        else:
            try:
                s = stats.summarize(groups)
            except stats.InsufficientData as exc:
                summary.status, summary.message = Status.INSUFFICIENT, str(exc)
            else:
                _fill(summary, s)
        session.add(summary)
    return len(cells)


def _fill(summary: CellSummary, s: stats.Summary) -> None:
    summary.status = Status.OK
    summary.center, summary.se, summary.low, summary.high = s.center, s.se, s.low, s.high
    summary.between_se = s.between_se
    summary.samples, summary.groups = s.samples, s.groups
