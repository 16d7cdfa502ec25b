"""Regressions accepted on record (keyword-only store functions): write them, read a head's or a pull request's.

An acceptance names the pull request's head; the commit judged for it may be that head merged into the base
(``gate.pair``, the check's ``judged_sha``), so a judged commit's acceptances are its own and those of the heads
judged as it."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import fields
from datetime import datetime

from sqlalchemy import func, or_, select
from sqlalchemy.orm import Session

from gate.domain.evaluations import Acceptance
from gate.store.models import PullCheck, RegressionAcceptance

_STORED = [f.name for f in fields(Acceptance) if f.name not in ("accepted", "worse")]


def _record(row: RegressionAcceptance) -> Acceptance:
    return Acceptance(**{name: getattr(row, name) for name in _STORED})


def record(session: Session, *, acceptances: Iterable[Acceptance]) -> int:
    rows = [RegressionAcceptance(**{name: getattr(a, name) for name in _STORED}) for a in acceptances]
    session.add_all(rows)
    session.flush()
    return len(rows)


def _of(head_sha: str):
    """Where an acceptance holds for the judged commit ``head_sha``: its own, or of a head judged as it."""
    heads = select(PullCheck.head_sha).where(PullCheck.judged_sha == head_sha)
    return or_(RegressionAcceptance.head_sha == head_sha, RegressionAcceptance.head_sha.in_(heads))


def for_head(session: Session, *, head_sha: str) -> list[Acceptance]:
    """Every acceptance on record for a judged commit, oldest first."""
    query = (
        select(RegressionAcceptance)
        .where(_of(head_sha))
        .order_by(RegressionAcceptance.accepted_at, RegressionAcceptance.id)
    )
    return [_record(r) for r in session.scalars(query)]


def of_pull(session: Session, *, repo: str, number: int) -> list[Acceptance]:
    """Every acceptance on record for a pull request, newest first."""
    query = (
        select(RegressionAcceptance)
        .where(RegressionAcceptance.repo == repo, RegressionAcceptance.number == number)
        .order_by(RegressionAcceptance.accepted_at.desc(), RegressionAcceptance.id.desc())
    )
    return [_record(r) for r in session.scalars(query)]


def ids(session: Session, *, head_sha: str) -> dict[int, datetime]:
    """id -> when recorded, of a head's acceptances (what an evaluation read, to find the ones it missed)."""
    query = select(RegressionAcceptance.id, RegressionAcceptance.recorded_at).where(_of(head_sha))
    return dict(session.execute(query).all())


def last(session: Session, *, head_sha: str) -> datetime | None:
    """When the newest acceptance of a head was recorded (stored, whatever time it says it was accepted)."""
    return session.scalar(select(func.max(RegressionAcceptance.recorded_at)).where(_of(head_sha)))


def to_json(acceptances: Iterable[Acceptance]) -> list[dict]:
    """Acceptances as an evaluation stores them (``Evaluation.acceptances``)."""
    out = []
    for a in acceptances:
        d = {f.name: getattr(a, f.name) for f in fields(Acceptance)}
        d["kind"], d["accepted_at"] = str(a.kind), a.accepted_at.isoformat()
        out.append(d)
    return out


def from_json(stored: list[dict] | None) -> list[Acceptance]:
    return [
        Acceptance(**{**d, "accepted_at": datetime.fromisoformat(d["accepted_at"])}) for d in stored or []
    ]
