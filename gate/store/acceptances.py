"""Regressions accepted on record (keyword-only store functions): write them, read a head's or a pull request's."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import fields
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from gate.domain import Acceptance
from gate.store.models import RegressionAcceptance

_STORED = [f.name for f in fields(Acceptance) if f.name not in ("accepted", "worse")]


def _record(row: RegressionAcceptance) -> Acceptance:
    return Acceptance(**{name: getattr(row, name) for name in _STORED})


def record(session: Session, *, acceptances: Iterable[Acceptance]) -> int:
    rows = [RegressionAcceptance(**{name: getattr(a, name) for name in _STORED}) for a in acceptances]
    session.add_all(rows)
    session.flush()
    return len(rows)


def for_head(session: Session, *, head_sha: str) -> list[Acceptance]:
    """Every acceptance on record for a head commit, oldest first."""
    query = (
        select(RegressionAcceptance)
        .where(RegressionAcceptance.head_sha == head_sha)
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
    query = select(RegressionAcceptance.id, RegressionAcceptance.recorded_at).where(
        RegressionAcceptance.head_sha == head_sha
    )
    return dict(session.execute(query).all())


def last(session: Session, *, head_sha: str) -> datetime | None:
    """When the newest acceptance of a head was recorded (stored, whatever time it says it was accepted)."""
    return session.scalar(
        select(func.max(RegressionAcceptance.recorded_at)).where(RegressionAcceptance.head_sha == head_sha)
    )


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
