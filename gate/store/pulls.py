"""The PR bot's store functions (keyword-only): deliveries, pull requests, their checks, the job queue and the
``/fusegate`` commands of their comments.

The queue is a table, so a webhook or an upload only inserts a row in its own transaction and never waits on
GitHub. A worker leases the *checks* that have due jobs (``lease_checks``: one sync of a check at a time, across
threads and processes), does the GitHub calls outside any transaction, then marks the jobs it saw done or
reschedules them and releases the check (``finish_jobs``). A lease that runs out (a worker that died) makes the
check available again; on PostgreSQL, ``SKIP LOCKED`` lets several service processes share the queue.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta

from sqlalchemy import or_, select, update
from sqlalchemy.orm import Session

from gate.store.columns import now, utc
from gate.store.models import BotJob, PullCheck, PullCommand, PullRequest, WebhookDelivery

LEASE = timedelta(minutes=10)  # longer than a sync with every GitHub retry and rate-limit wait


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
    event_at: datetime | None,
) -> PullRequest | None:
    """Record the PR as of this event; None (nothing changed) when the event is older than one already seen."""
    record = pull(session, repo=repo, number=number)
    if record is None:
        record = PullRequest(repo=repo, number=number, comment_digest="")
        session.add(record)
    elif event_at is not None and record.event_at is not None and event_at < utc(record.event_at):
        return None
    record.title, record.base_ref, record.base_sha, record.head_sha = title, base_ref, base_sha, head_sha
    record.event_at = event_at or record.event_at
    record.installation_id = installation_id if installation_id is not None else record.installation_id
    record.updated_at = now()
    session.flush()
    return record


def ensure_check(
    session: Session, *, pull: PullRequest, deadline: datetime, restart: bool = False
) -> PullCheck:
    """The check of the pull request's current (base, head); a new head starts a new check, pending.

    A moved base branch, or ``restart`` (a reopened PR), starts the check again with a new deadline.
    """
    check = session.scalar(
        select(PullCheck).where(PullCheck.pull_id == pull.id, PullCheck.head_sha == pull.head_sha)
    )
    if check is None:
        check = PullCheck(pull_id=pull.id, base_sha=pull.base_sha, head_sha=pull.head_sha, deadline=deadline)
        session.add(check)
    elif restart or check.base_sha != pull.base_sha:
        check.base_sha, check.deadline, check.state, check.settled_at = (
            pull.base_sha,
            deadline,
            "pending",
            None,
        )
        check.posted = ""  # post again: the head's status may have been changed meanwhile
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
    """Checks of pull requests' current heads whose base, head or judged head is one of ``shas``."""
    shas = list(shas)
    rows = session.scalars(
        select(PullCheck.id)
        .join(PullRequest, PullRequest.id == PullCheck.pull_id)
        .where(PullCheck.head_sha == PullRequest.head_sha)
        .where(
            or_(PullCheck.head_sha.in_(shas), PullCheck.base_sha.in_(shas), PullCheck.judged_sha.in_(shas))
        )
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


def lease_checks(session: Session, *, at: datetime, limit: int = 20) -> dict[int, list[int]]:
    """Lease checks with due jobs and no live lease: {check id: [its due job ids]}. Every due job of a check is
    served by one sync; jobs queued while it runs wait for the next."""
    due = select(BotJob.check_id).where(BotJob.done_at.is_(None), BotJob.due_at <= at)
    query = (
        select(PullCheck.id)
        .where(PullCheck.id.in_(due))
        .where(or_(PullCheck.lease_until.is_(None), PullCheck.lease_until < at))
        .order_by(PullCheck.id)
        .limit(limit)
    )
    if session.get_bind().dialect.name == "postgresql":
        query = query.with_for_update(skip_locked=True)
    checks = list(session.scalars(query))
    if not checks:
        return {}
    session.execute(update(PullCheck).where(PullCheck.id.in_(checks)).values(lease_until=at + LEASE))
    by: dict[int, list[int]] = {c: [] for c in checks}
    jobs = select(BotJob.id, BotJob.check_id).where(
        BotJob.check_id.in_(checks), BotJob.done_at.is_(None), BotJob.due_at <= at
    )
    for job_id, check_id in session.execute(jobs):
        by[check_id].append(job_id)
    return by


def finish_jobs(
    session: Session,
    *,
    check_id: int,
    job_ids: list[int],
    error: str = "",
    retry_at: datetime | None = None,
) -> None:
    """Done, or (with ``retry_at``) failed with ``error`` and due again then; the check's lease is released."""
    if retry_at is None:
        values = {"done_at": now(), "error": error}
    else:
        values = {"due_at": retry_at, "error": error, "attempts": BotJob.attempts + 1}
    session.execute(update(BotJob).where(BotJob.id.in_(job_ids)).values(**values))
    session.execute(update(PullCheck).where(PullCheck.id == check_id).values(lease_until=None))


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


def record_command(
    session: Session,
    *,
    pull: PullRequest,
    comment_id: int,
    login: str,
    body: str,
    url: str,
    action: str,
    commented_at: datetime,
) -> PullCommand:
    """A comment with a ``/fusegate`` command, for the worker to answer; it is for the PR's head as of now."""
    command = PullCommand(
        pull_id=pull.id,
        comment_id=comment_id,
        login=login,
        body=body,
        url=url,
        action=action,
        head_sha=pull.head_sha,
        commented_at=commented_at,
        answers=[],
    )
    session.add(command)
    session.flush()
    return command


def pending_commands(session: Session, *, pull_id: int) -> list[PullCommand]:
    """A pull request's commands not answered yet, in the order they arrived."""
    query = select(PullCommand).where(PullCommand.pull_id == pull_id, PullCommand.handled_at.is_(None))
    return list(session.scalars(query.order_by(PullCommand.id)))


def answer_command(session: Session, *, command_id: int, answers: list[dict]) -> None:
    session.execute(
        update(PullCommand).where(PullCommand.id == command_id).values(handled_at=now(), answers=answers)
    )


def answered_commands(
    session: Session, *, pull_id: int, head_sha: str, since: datetime, limit: int = 10
) -> list[PullCommand]:
    """The newest ``limit`` answered commands of a pull request's head (received for it, or answered ``since``
    its check started), oldest first."""
    query = (
        select(PullCommand)
        .where(PullCommand.pull_id == pull_id, PullCommand.handled_at.is_not(None))
        .where(or_(PullCommand.head_sha == head_sha, PullCommand.handled_at >= since))
        .order_by(PullCommand.id.desc())
        .limit(limit)
    )
    return list(session.scalars(query))[::-1]
