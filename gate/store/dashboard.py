"""The dashboard's reads (keyword-only). Each is a handful of indexed queries, whatever the size of the store."""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from gate.store import queries
from gate.store.models import CellSummary, Commit, Machine, Placement, Run
from gate.store.queries import SummaryView


def machine(session: Session, *, name: str) -> Machine | None:
    return session.scalar(select(Machine).where(Machine.name == name))


def overview(session: Session) -> list[dict]:
    """Every machine with its placements, newest run and A/A calibrations."""
    machines = queries.machines(session)
    placements = defaultdict(set)
    for machine_id, label in session.execute(
        select(Run.machine_id, Placement.label).join(Placement, Run.placement_id == Placement.id).distinct()
    ):
        placements[machine_id].add(label)
    calibrations = defaultdict(list)
    for _, c in queries.calibrations(session):
        calibrations[c.machine_id].append(c)
    out = []
    for m in machines:
        last = newest_run(session, machine_id=m.id)
        out.append(
            {
                "machine": m,
                "placements": sorted(placements[m.id]),
                "last_run": last,
                "calibrations": calibrations[m.id],
            }
        )
    return out


def newest_run(session: Session, *, machine_id: int) -> tuple[str, datetime, datetime, str] | None:
    """(commit sha, started_at, uploaded_at, placement label) of the machine's newest run (by the commit's date
    asv recorded)."""
    row = session.execute(
        select(Commit.sha, Run.started_at, Run.uploaded_at, Placement.label)
        .join(Commit, Run.commit_id == Commit.id)
        .join(Placement, Run.placement_id == Placement.id)
        .where(Run.machine_id == machine_id)
        .order_by(Run.started_at.desc(), Run.id.desc())
        .limit(1)
    ).first()
    return tuple(row) if row else None


def commit_measured(session: Session, *, machine_id: int, sha: str) -> bool:
    return (
        session.scalar(
            select(Run.id)
            .join(Commit, Run.commit_id == Commit.id)
            .where(Run.machine_id == machine_id, Commit.sha == sha)
            .limit(1)
        )
        is not None
    )


def history(
    session: Session, *, machine_id: int, benchmark: str, task: str, impl: str, num_envs: int, threads: int
) -> list[tuple[str, datetime, str, SummaryView]]:
    """(commit sha, commit date, placement label, summary) of one cell on one machine, oldest first."""
    found = session.execute(
        select(Commit.sha, Placement.label, CellSummary.__table__)
        .join(Commit, CellSummary.commit_id == Commit.id)
        .join(Placement, CellSummary.placement_id == Placement.id)
        .where(
            CellSummary.machine_id == machine_id,
            CellSummary.benchmark == benchmark,
            CellSummary.task == task,
            CellSummary.impl == impl,
            CellSummary.num_envs == num_envs,
            CellSummary.threads == threads,
        )
    ).all()
    cells = [(sha, label, SummaryView(*rest)) for sha, label, *rest in found]
    if not cells:
        return []
    dates = dict(
        session.execute(
            select(Run.commit_id, func.min(Run.started_at))
            .where(Run.machine_id == machine_id, Run.commit_id.in_({c.commit_id for _, _, c in cells}))
            .group_by(Run.commit_id)
        ).all()
    )
    rows = [(sha, dates.get(c.commit_id), label, c) for sha, label, c in cells]
    return sorted(rows, key=lambda r: (r[1] is None, r[1] or datetime.min, r[0]))
