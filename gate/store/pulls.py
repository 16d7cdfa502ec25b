"""The PR bot's store functions (keyword-only): deliveries, pull requests, their checks and the job queue.

The queue is a table, so a webhook or an upload only inserts a row in its own transaction and never waits on
GitHub. A worker leases due jobs (``lease_jobs``), does the GitHub calls outside any transaction, and then marks
them done or reschedules them (``finish_jobs``). A lease that runs out (a worker that died) makes the job due
again; on PostgreSQL, ``SKIP LOCKED`` lets several service processes share the queue.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta

from sqlalchemy import or_, select, update
from sqlalchemy.orm import Session

from gate.store.models import BotJob, Commit, Machine, PullCheck, PullRequest, Run, WebhookDelivery, now

LEASE = timedelta(seconds=120)


def seen_delivery(session: Session, *, delivery: str) -> bool:
    return session.scalar(select(WebhookDelivery.id).where(WebhookDelivery.delivery == delivery)) is not None


def record_delivery(session: Session, *, delivery: str, event: str, action: str) -> None:
    session.add(WebhookDelivery(delivery=delivery, event=event, action=action))
    session.flush()


def upsert_pull(
    session: Session,
    *,
    repo: str,
    number: int,
    title: str,
    base_ref: str,
    base_sha: str,
    head_sha: str,
    installation_id: int | None,
) -> PullRequest:
    pull = session.scalar(select(PullRequest).where(PullRequest.repo == repo, PullRequest.number == number))
    if pull is None:
        pull = PullRequest(repo=repo, number=number, comment_digest="")
        session.add(pull)
    pull.title, pull.base_ref, pull.base_sha, pull.head_sha = title, base_ref, base_sha, head_sha
    pull.installation_id = installation_id if installation_id is not None else pull.installation_id
    pull.updated_at = now()
    session.flush()
    return pull


def ensure_check(session: Session, *, pull: PullRequest, deadline: datetime) -> PullCheck:
    """The check of the pull request's current (base, head); a new head starts a new check, pending."""
    check = session.scalar(
        select(PullCheck).where(PullCheck.pull_id == pull.id, PullCheck.head_sha == pull.head_sha)
    )
    if check is None:
        check = PullCheck(pull_id=pull.id, base_sha=pull.base_sha, head_sha=pull.head_sha, deadline=deadline)
        session.add(check)
    elif check.base_sha != pull.base_sha:  # the base branch moved: judge against the new base, from scratch
        check.base_sha, check.deadline, check.state, check.settled_at = (
            pull.base_sha,
            deadline,
            "pending",
            None,
        )
    session.flush()
    return check


def enqueue(
    session: Session, *, check_ids: Iterable[int], reason: str, due_at: datetime | None = None
) -> int:
    jobs = [BotJob(check_id=i, reason=reason, due_at=due_at or now()) for i in sorted(set(check_ids))]
    session.add_all(jobs)
    session.flush()
    return len(jobs)


def checks_with_commits(session: Session, *, shas: Iterable[str]) -> list[int]:
    """Checks of pull requests' current heads whose base or head is one of ``shas``."""
    shas = list(shas)
    rows = session.scalars(
        select(PullCheck.id)
        .join(PullRequest, PullRequest.id == PullCheck.pull_id)
        .where(PullCheck.head_sha == PullRequest.head_sha)
        .where(or_(PullCheck.head_sha.in_(shas), PullCheck.base_sha.in_(shas)))
    )
    return list(rows)


def overdue_checks(session: Session, *, at: datetime) -> list[int]:
    """Pending checks of current heads past their deadline with no job waiting: the worker settles them."""
    waiting = select(BotJob.check_id).where(BotJob.done_at.is_(None))
    return list(
        session.scalars(
            select(PullCheck.id)
            .join(PullRequest, PullRequest.id == PullCheck.pull_id)
            .where(PullCheck.head_sha == PullRequest.head_sha, PullCheck.state == "pending")
            .where(PullCheck.deadline < at, PullCheck.id.not_in(waiting))
        )
    )


def lease_jobs(session: Session, *, at: datetime, limit: int = 50) -> dict[int, list[int]]:
    """Lease the due jobs: {check id: [job ids]}, so every check is brought up to date once for all its jobs."""
    query = (
        select(BotJob.id, BotJob.check_id)
        .where(BotJob.done_at.is_(None), BotJob.due_at <= at)
        .where(or_(BotJob.lease_until.is_(None), BotJob.lease_until < at))
        .order_by(BotJob.id)
        .limit(limit)
    )
    if session.get_bind().dialect.name == "postgresql":
        query = query.with_for_update(skip_locked=True)
    by: dict[int, list[int]] = {}
    for job_id, check_id in session.execute(query):
        by.setdefault(check_id, []).append(job_id)
    ids = [i for jobs in by.values() for i in jobs]
    if ids:
        session.execute(update(BotJob).where(BotJob.id.in_(ids)).values(lease_until=at + LEASE))
    return by


def finish_jobs(
    session: Session, *, job_ids: list[int], error: str = "", retry_at: datetime | None = None
) -> None:
    """Done, or (with ``retry_at``) failed with ``error`` and due again then."""
    if retry_at is None:
        values = {"done_at": now(), "lease_until": None, "error": error}
    else:
        values = {"due_at": retry_at, "lease_until": None, "error": error, "attempts": BotJob.attempts + 1}
    session.execute(update(BotJob).where(BotJob.id.in_(job_ids)).values(**values))


def attempts(session: Session, *, job_ids: list[int]) -> int:
    return max(session.scalars(select(BotJob.attempts).where(BotJob.id.in_(job_ids))), default=0)


def check(session: Session, *, check_id: int) -> PullCheck | None:
    return session.get(PullCheck, check_id)


def pull(session: Session, *, repo: str, number: int) -> PullRequest | None:
    return session.scalar(select(PullRequest).where(PullRequest.repo == repo, PullRequest.number == number))


def checks_of(session: Session, *, pull_id: int) -> list[PullCheck]:
    return list(
        session.scalars(select(PullCheck).where(PullCheck.pull_id == pull_id).order_by(PullCheck.id.desc()))
    )


def pending_jobs(session: Session) -> list[BotJob]:
    return list(session.scalars(select(BotJob).where(BotJob.done_at.is_(None)).order_by(BotJob.id)))


def reported_machines(session: Session, *, commit_sha: str) -> set[str]:
    """Machines with stored runs of a commit."""
    stmt = (
        select(Machine.name)
        .join(Run, Run.machine_id == Machine.id)
        .join(Commit, Run.commit_id == Commit.id)
        .where(Commit.sha == commit_sha)
        .distinct()
    )
    return set(session.scalars(stmt))
