"""Verdicts and noise floors: evaluations with their comparisons, and the calibrations of each machine."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict
from datetime import datetime

from sqlalchemy import delete, insert, select
from sqlalchemy.orm import Session, aliased, selectinload

from gate import stats
from gate.domain.evaluations import ComparisonRecord
from gate.store.models import Calibration, Commit, Comparison, Evaluation, Machine, now
from gate.store.queries.keys import get_or_create
from gate.store.queries.measured import commit_id


def save_evaluation(
    session: Session,
    *,
    base_sha: str,
    head_sha: str,
    verdict: str,
    policy_source: str,
    policy: dict,
    reasons: list[str],
    comparisons: Sequence[ComparisonRecord],
    created_at: datetime | None = None,
    official: bool = True,
    requested_by: str | None = None,
    acceptances: list[dict] | None = None,
) -> Evaluation:
    evaluation = Evaluation(
        acceptances=acceptances or None,
        created_at=created_at or now(),
        official=official,
        requested_by=requested_by,
        base_commit_id=get_or_create(session, Commit, key={"sha": base_sha}),
        head_commit_id=get_or_create(session, Commit, key={"sha": head_sha}),
        verdict=verdict,
        policy_source=policy_source,
        policy=policy,
        reasons=reasons,
    )
    session.add(evaluation)
    session.flush()
    if comparisons:  # one executemany, not an ORM object per cell
        session.execute(
            insert(Comparison), [{**asdict(c), "evaluation_id": evaluation.id} for c in comparisons]
        )
    session.expire(evaluation, ["comparisons"])
    return evaluation


def latest_evaluation(session: Session, *, head_sha: str, base_sha: str | None = None) -> Evaluation | None:
    """The newest stored official evaluation of ``head_sha`` (the one that saw the most data): against
    ``base_sha`` when given, else against any base. Ad-hoc evaluations are never the verdict."""
    head = commit_id(session, sha=head_sha)
    if head is None:
        return None
    stmt = select(Evaluation).where(Evaluation.head_commit_id == head, Evaluation.official.is_(True))
    if base_sha is not None:
        base = commit_id(session, sha=base_sha)
        if base is None:
            return None
        stmt = stmt.where(Evaluation.base_commit_id == base)
    return session.scalar(
        stmt.order_by(Evaluation.created_at.desc(), Evaluation.id.desc())
        .limit(1)
        .options(selectinload(Evaluation.comparisons))
    )


def evaluation(session: Session, *, evaluation_id: int) -> Evaluation | None:
    return session.scalar(
        select(Evaluation).where(Evaluation.id == evaluation_id).options(selectinload(Evaluation.comparisons))
    )


def evaluations(session: Session, *, limit: int = 50) -> list[tuple[Evaluation, str, str]]:
    """(evaluation, base sha, head sha), newest first."""
    base, head = aliased(Commit), aliased(Commit)
    stmt = (
        select(Evaluation, base.sha, head.sha)
        .join(base, Evaluation.base_commit_id == base.id)
        .join(head, Evaluation.head_commit_id == head.id)
        .order_by(Evaluation.id.desc())
        .limit(limit)
    )
    return [tuple(row) for row in session.execute(stmt)]


def evaluation_pairs(
    session: Session, *, commit_sha: str | None = None, official: bool = True
) -> list[tuple[str, str]]:
    """Distinct (base, head) with a stored verdict (an official one unless ``official`` is False), those that
    involve ``commit_sha`` when given: re-evaluated when its results change."""
    base, head = aliased(Commit), aliased(Commit)
    stmt = (
        select(base.sha, head.sha)
        .select_from(Evaluation)
        .join(base, Evaluation.base_commit_id == base.id)
        .join(head, Evaluation.head_commit_id == head.id)
        .distinct()
        .order_by(base.sha, head.sha)
    )
    if commit_sha is not None:
        stmt = stmt.where((base.sha == commit_sha) | (head.sha == commit_sha))
    if official:
        stmt = stmt.where(Evaluation.official.is_(True))
    return [tuple(row) for row in session.execute(stmt)]


def save_calibration(
    session: Session, *, machine: str, design: str, threads: int, floor: stats.NoiseFloor, commit_sha: str
) -> None:
    machine_id = session.scalar(select(Machine.id).where(Machine.name == machine))
    session.execute(
        delete(Calibration).where(
            Calibration.machine_id == machine_id, Calibration.design == design, Calibration.threads == threads
        )
    )
    session.add(
        Calibration(
            machine_id=machine_id,
            design=design,
            threads=threads,
            noise_floor=floor.noise_floor,
            mde=floor.mde,
            cells=floor.cells,
            commit_sha=commit_sha,
        )
    )


def calibrations(session: Session, *, machines: Iterable[str] | None = None) -> list[tuple[str, Calibration]]:
    stmt = (
        select(Machine.name, Calibration)
        .join(Machine, Calibration.machine_id == Machine.id)
        .order_by(Calibration.design, Calibration.threads)
    )
    if machines is not None:
        stmt = stmt.where(Machine.name.in_(list(machines)))
    return [tuple(row) for row in session.execute(stmt)]
