"""Measurements out: runs, results and the cell summaries evaluations read.

A summary is read as a frozen ``SummaryView`` (no ORM identity: an evaluation reads thousands). Its num_envs and
threads are 0 where the benchmark has no such parameter: the summaries' unique key cannot hold NULL. Results keep
NULL there, as asv wrote no value.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from gate.domain.vocabulary import Status
from gate.store.models import CellSummary, Commit, Environment, Machine, Placement, Result, Run


@dataclass(frozen=True, slots=True)
class SummaryView:
    """One stored cell summary: its cell, status and statistics."""

    id: int
    machine_id: int
    commit_id: int
    placement_id: int
    benchmark: str
    task: str
    impl: str
    num_envs: int  # 0: the benchmark has no num_envs
    threads: int  # 0: the benchmark has no threads
    status: Status
    message: str
    center: float | None
    se: float | None
    between_se: float | None
    low: float | None
    high: float | None
    samples: int
    groups: int
    updated_at: datetime


def commit_id(session: Session, *, sha: str) -> int | None:
    return session.scalar(select(Commit.id).where(Commit.sha == sha))


def summaries(
    session: Session, *, commit_sha: str, machines: Iterable[str] | None = None
) -> list[tuple[str, str, str, SummaryView]]:
    """(machine name, placement hash, placement label, summary) of every cell measured on a commit."""
    stmt = (
        select(Machine.name, Placement.hash, Placement.label, CellSummary.__table__)
        .join(Commit, CellSummary.commit_id == Commit.id)
        .join(Machine, CellSummary.machine_id == Machine.id)
        .join(Placement, CellSummary.placement_id == Placement.id)
        .where(Commit.sha == commit_sha)
    )
    if machines is not None:
        stmt = stmt.where(Machine.name.in_(list(machines)))
    return [(row[0], row[1], row[2], SummaryView(*row[3:])) for row in session.execute(stmt)]


def implementations(session: Session, *, commit_sha: str) -> set[str]:
    """Every implementation with a measured cell on a commit (an impl's baseline included)."""
    stmt = (
        select(CellSummary.impl)
        .join(Commit, CellSummary.commit_id == Commit.id)
        .where(Commit.sha == commit_sha)
        .distinct()
    )
    return set(session.scalars(stmt))


def fingerprints(session: Session, *, commit_sha: str) -> dict[str, set[str]]:
    """Machine name -> the hardware fingerprint hashes of its runs of a commit."""
    stmt = (
        select(Machine.name, Run.fingerprint_hash)
        .join(Machine, Run.machine_id == Machine.id)
        .join(Commit, Run.commit_id == Commit.id)
        .where(Commit.sha == commit_sha)
        .distinct()
    )
    out: dict[str, set[str]] = defaultdict(set)
    for name, fingerprint in session.execute(stmt):
        out[name].add(fingerprint)
    return dict(out)


def provenances(session: Session, *, commit_sha: str) -> dict[tuple[str, str], list[dict]]:
    """(machine name, placement hash) -> the provenance of each run of a commit there ({}: not recorded)."""
    stmt = (
        select(Machine.name, Placement.hash, Run.provenance)
        .join(Machine, Run.machine_id == Machine.id)
        .join(Commit, Run.commit_id == Commit.id)
        .join(Placement, Run.placement_id == Placement.id)
        .where(Commit.sha == commit_sha)
        .order_by(Run.id)
    )
    out: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for name, placement, provenance in session.execute(stmt):
        out[(name, placement)].append(provenance or {})
    return dict(out)


def softwares(session: Session, *, commit_sha: str) -> dict[tuple[str, str], list[dict]]:
    """(machine name, placement hash) -> the software fingerprint of each run of a commit there."""
    stmt = (
        select(Machine.name, Placement.hash, Environment.software)
        .select_from(Run)
        .join(Machine, Run.machine_id == Machine.id)
        .join(Commit, Run.commit_id == Commit.id)
        .join(Placement, Run.placement_id == Placement.id)
        .join(Environment, Run.environment_id == Environment.id)
        .where(Commit.sha == commit_sha)
        .order_by(Run.id)
    )
    out: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for name, placement, software in session.execute(stmt):
        out[(name, placement)].append(software or {})
    return dict(out)


def machines(session: Session) -> list[Machine]:
    return list(session.scalars(select(Machine).order_by(Machine.name)))


def runs(
    session: Session, *, machine: str | None = None, commit_sha: str | None = None, limit: int = 100
) -> list[tuple[Run, str, str, str]]:
    """(run, machine name, commit sha, placement label), newest first."""
    stmt = (
        select(Run, Machine.name, Commit.sha, Placement.label)
        .join(Machine, Run.machine_id == Machine.id)
        .join(Commit, Run.commit_id == Commit.id)
        .join(Placement, Run.placement_id == Placement.id)
        .order_by(Run.uploaded_at.desc(), Run.id.desc())
        .limit(limit)
    )
    if machine is not None:
        stmt = stmt.where(Machine.name == machine)
    if commit_sha is not None:
        stmt = stmt.where(Commit.sha == commit_sha)
    return [tuple(row) for row in session.execute(stmt)]


def count_results(session: Session) -> int:
    return session.scalar(select(func.count(Result.id)))


def uploads(session: Session, *, commit_shas: Iterable[str]) -> dict[int, datetime]:
    """Run id -> when it was uploaded, for every run of these commits."""
    stmt = select(Run.id, Run.uploaded_at).join(Commit, Run.commit_id == Commit.id)
    return {run: at for run, at in session.execute(stmt.where(Commit.sha.in_(list(commit_shas))))}


def last_upload(session: Session, *, commit_shas: Iterable[str]) -> datetime | None:
    """When results of any of these commits last arrived."""
    return session.scalar(
        select(func.max(Run.uploaded_at))
        .join(Commit, Run.commit_id == Commit.id)
        .where(Commit.sha.in_(list(commit_shas)))
    )


def raw_samples(session: Session, *, commit_sha: str, benchmark: str) -> dict[tuple, list[list[float]]]:
    """(machine, placement hash, task, impl, num_envs, threads) -> every process's samples of a benchmark."""
    stmt = (
        select(Machine.name, Placement.hash, Result)
        .join(Run, Result.run_id == Run.id)
        .join(Machine, Run.machine_id == Machine.id)
        .join(Placement, Run.placement_id == Placement.id)
        .join(Commit, Run.commit_id == Commit.id)
        .where(Commit.sha == commit_sha, Result.benchmark == benchmark, Result.status == Status.OK)
    )
    out: dict[tuple, list[list[float]]] = defaultdict(list)
    for machine, placement, r in session.execute(stmt):
        out[(machine, placement, r.task, r.impl, r.num_envs, r.threads)].extend(r.samples)
    return dict(out)
