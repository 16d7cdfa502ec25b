"""The bot's worker: brings each queued check up to date on GitHub, outside any request.

A job names a check. ``run_once`` leases the due jobs, and for each check: reads the policy from the base commit,
waits for the required machines (until the check's deadline), evaluates when they have all reported (or reads
the stored verdict if no results arrived since), answers the PR's ``/fusegate`` commands (``gate.acceptance``:
asking GitHub each author's permission; an acceptance recorded evaluates again), posts the commit status if it
changed, then edits the PR's one comment, which shows the answers. GitHub failures reschedule the job with backoff (``RateLimited`` until the limit resets), so a GitHub
outage delays statuses and loses none.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

from gate import acceptance, backoff, git
from gate import pair as pairs
from gate import policy as policies
from gate.bot import post, report
from gate.bot.github import GitHub, GitHubError, RateLimited
from gate.domain.evaluations import EvaluationRecord
from gate.services import verdicts
from gate.store import acceptances, db, pulls, queries
from gate.store.columns import now, utc

log = logging.getLogger("fusegate.bot")
MAX_RETRY = timedelta(minutes=10)
MAX_REFUSALS = (
    5  # GitHub refusing a call (4xx other than rate limits) this many times in a row: give up the job
)


class MissingCommit(RuntimeError):
    """Base or head is not in the service's clone even after a fetch: retried until the check's deadline."""


@dataclass(frozen=True, kw_only=True)
class Job:
    """What one sync needs to know of a check, read once."""

    check_id: int
    pull_id: int
    created_at: datetime
    repo: str
    number: int
    base_ref: str
    base_sha: str
    head_sha: str
    judged_sha: str  # the commit judged for the head: itself, or it merged into the base (``gate.pair``)
    installation_id: int | None
    comment_id: int | None
    comment_digest: str
    posted: str
    deadline: datetime


class Worker:
    def __init__(
        self, *, url: str, repo: Path, github: GitHub, public_url: str, window_s: float, poll_s: float = 5.0
    ):
        self.url, self.repo, self.github = url, repo, github
        self.public_url, self.window_s, self.poll_s = public_url.rstrip("/"), window_s, poll_s
        self._wake, self._stop = threading.Event(), threading.Event()
        self._thread: threading.Thread | None = None

    # -- the loop ---------------------------------------------------------------------------------------------
    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="fusegate-bot", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(30)
        self.github.close()

    def wake(self) -> None:
        self._wake.set()

    def _loop(self) -> None:
        while not self._stop.is_set():
            self._wake.clear()
            try:
                while self.run_once():  # drain: jobs queued while syncing are picked up at once
                    pass
            except Exception:  # the store is down: keep the loop alive, try again after the poll
                log.exception("bot worker pass failed")
            self._wake.wait(self.poll_s)

    def deadline(self) -> datetime:
        return now() + timedelta(seconds=self.window_s)

    def run_once(self) -> int:
        """One pass over the checks with due jobs; returns how many it synced."""
        at = now()
        with db.transaction(self.url) as session:
            overdue = pulls.overdue_checks(session, at=at)
            if overdue:
                pulls.enqueue(session, check_ids=overdue, reason="deadline", due_at=at)
            leased = pulls.lease_checks(session, at=at)
        for check_id, job_ids in leased.items():
            try:
                self.sync(check_id)
            except Exception as exc:
                self._failed(check_id, job_ids, exc)
            else:
                with db.transaction(self.url) as session:
                    pulls.finish_jobs(session, check_id=check_id, job_ids=job_ids)
        return len(leased)

    def _failed(self, check_id: int, job_ids: list[int], exc: Exception) -> None:
        """Reschedule with backoff (until the limit resets, when rate limited); give up on repeated refusals."""
        error = f"{type(exc).__name__}: {exc}"
        with db.transaction(self.url) as session:
            tries = pulls.attempts(session, job_ids=job_ids) + 1
            refused = isinstance(exc, GitHubError) and exc.status is not None and 400 <= exc.status < 500
            if isinstance(exc, RateLimited):
                retry_at = datetime.fromtimestamp(exc.retry_at, UTC)
            elif refused and tries >= MAX_REFUSALS:
                pulls.finish_jobs(session, check_id=check_id, job_ids=job_ids, error=f"gave up: {error}")
                log.error("check %s: GitHub refused %d times, giving up: %s", check_id, tries, error)
                return
            else:
                wait = backoff.delay(tries - 1, base=2.0, cap=MAX_RETRY.total_seconds())
                retry_at = now() + timedelta(seconds=wait)
            pulls.finish_jobs(session, check_id=check_id, job_ids=job_ids, error=error, retry_at=retry_at)
        log.warning("check %s: %s; retrying at %s", check_id, error, retry_at.isoformat())

    # -- one check --------------------------------------------------------------------------------------------
    def _job(self, check_id: int) -> Job | None:
        with db.transaction(self.url, write=False) as session:
            check = pulls.check(session, check_id=check_id)
            if check is None or check.pull.head_sha != check.head_sha:
                return None  # gone, or superseded by a newer push: its status no longer matters
            p = check.pull
            return Job(
                check_id=check.id,
                pull_id=p.id,
                created_at=utc(check.created_at),
                repo=p.repo,
                number=p.number,
                base_ref=p.base_ref,
                base_sha=check.base_sha,
                head_sha=check.head_sha,
                judged_sha=check.judged_sha or check.head_sha,
                installation_id=p.installation_id,
                comment_id=p.comment_id,
                comment_digest=p.comment_digest,
                posted=check.posted,
                deadline=utc(check.deadline),
            )

    def link(self, job: Job) -> str:
        return f"{self.public_url}/pr/{job.base_sha}/{job.judged_sha}"  # the dashboard's PR verdict page

    @staticmethod
    def ask(job: Job) -> str:
        """How an inconclusive check gets its rounds on the fleet (the comment says it)."""
        return (
            "nothing to do while the status is pending: each machine's runner asks the service for them after its "
            f"upload (`fusegate rounds --base {job.base_sha[:12]} --head {job.judged_sha[:12]} --machine M` shows what "
            "it is asked); once it is red, re-run the benchmark workflow's job of that machine"
        )

    def sync(self, check_id: int) -> report.Status | None:
        job = self._job(check_id)
        if job is None:
            return None
        evaluation, source, at = None, "", now()
        missing = git.fetch_missing(self.repo, [job.base_sha, job.head_sha])
        if missing and at < job.deadline:
            raise MissingCommit(f"{', '.join(s[:12] for s in missing)} not in {self.repo} after a fetch")
        try:
            policy, source = policies.read_from_base(self.repo, job.base_sha)
            job = self._judged(job)
        except policies.PolicyError as exc:
            status = report.error_status(f"policy: {exc}")
        except pairs.PairError as exc:
            status = report.error_status(str(exc))
        else:
            with db.transaction(self.url, write=False) as session:
                ready = set(queries.fingerprints(session, commit_sha=job.base_sha)) & set(
                    queries.fingerprints(session, commit_sha=job.judged_sha)
                )  # machines with runs of both
            waiting = report.Waiting(required=policy.required_machines, ready=tuple(sorted(ready)))
            status = report.waiting_status(waiting, now=at, deadline=job.deadline, window_s=self.window_s)
            if (
                ready
            ):  # also while machines are missing: the ones that reported learn if they need more rounds
                evaluation = self._evaluation(job)
            if self._commands(job, evaluation) and ready:
                evaluation = self._evaluation(job)  # an acceptance recorded since made it stale
            if status is None:
                status = report.verdict_status(evaluation, policy, now=at, deadline=job.deadline)
        if status.posted != job.posted:
            post.statuses(
                self.github,
                job.repo,
                job.head_sha,
                status,
                evaluation,
                target_url=self.link(job),
                installation_id=job.installation_id,
            )
        self._save(job, status, evaluation)
        with db.transaction(self.url, write=False) as session:
            answered = [
                report.Answered(login=c.login, url=c.url, answers=tuple(c.answers))
                for c in pulls.answered_commands(
                    session, pull_id=job.pull_id, head_sha=job.head_sha, since=job.created_at
                )
            ]
        body = report.comment(
            status=status,
            base_sha=job.base_sha,
            head_sha=job.head_sha,
            base_ref=job.base_ref,
            link=self.link(job),
            evaluation=evaluation,
            policy_source=source,
            policy_edited=policies.edits_policy(self.repo, job.base_sha, job.head_sha),
            site=self.public_url,
            judged_sha=job.judged_sha,
            ask=self.ask(job),
            commands=answered,
        )
        digest = hashlib.sha256(body.encode()).hexdigest()
        if digest != job.comment_digest:
            comment_id = self._upsert_comment(job, body)
            with db.transaction(self.url) as session:
                pull = pulls.check(session, check_id=job.check_id).pull
                pull.comment_id, pull.comment_digest = comment_id, digest
        return status

    def _save(self, job: Job, status: report.Status, evaluation: EvaluationRecord | None) -> None:
        """The status as posted: stored before the comment, so a comment failure does not post it twice."""
        with db.transaction(self.url) as session:
            check = pulls.check(session, check_id=job.check_id)
            check.state, check.description, check.posted = status.state, status.description, status.posted
            check.evaluation_id = evaluation.id if evaluation is not None else None
            check.settled_at = now() if status.settled else None

    def _commands(self, job: Job, evaluation: EvaluationRecord | None) -> bool:
        """Answer the pull request's pending ``/fusegate`` commands against ``evaluation``, each in its own
        transaction once GitHub said who may accept (a GitHub failure leaves the rest pending, retried with the
        job). The bot's own comments are never commands. True when an acceptance was recorded."""
        with db.transaction(self.url, write=False) as session:
            pending = [
                (
                    c.id,
                    acceptance.Comment(
                        id=c.comment_id,
                        login=c.login,
                        body=c.body,
                        url=c.url,
                        at=utc(c.commented_at),
                        head_sha=c.head_sha,
                    ),
                )
                for c in pulls.pending_commands(session, pull_id=job.pull_id)
            ]
            on_record = acceptances.for_head(session, head_sha=job.head_sha)
        if not pending:
            return False
        me = self.github.login(job.installation_id)
        asked: dict[str, str] = {}

        def permission(login: str) -> str:
            if login not in asked:
                asked[login] = self.github.permission(job.repo, login, installation_id=job.installation_id)
            return asked[login]

        rows = evaluation.comparisons if evaluation is not None and evaluation.comparisons else None
        recorded = False
        for command_id, comment in pending:
            answers = []
            if comment.login != me:
                answers = acceptance.handle(
                    comment,
                    repo=job.repo,
                    number=job.number,
                    head_sha=job.head_sha,
                    rows=rows,
                    permission=permission,
                    accepted=on_record,
                    at=now(),
                )
            new = [a for answer in answers for a in answer.acceptances]
            with db.transaction(self.url) as session:
                acceptances.record(session, acceptances=new)
                pulls.answer_command(
                    session,
                    command_id=command_id,
                    answers=[{"command": a.command, "text": a.text, "ok": a.ok} for a in answers],
                )
            on_record += new
            recorded = recorded or bool(new)
        return recorded

    def _evaluation(self, job: Job) -> EvaluationRecord:
        return verdicts.current(self.url, repo=self.repo, base_sha=job.base_sha, head_sha=job.judged_sha)

    def _judged(self, job: Job) -> Job:
        """The job with the commit its head is judged as (``gate.pair``), recorded on the check so that
        results uploaded for that commit queue it."""
        found = pairs.judged(self.repo, job.base_sha, job.head_sha)
        if found.head != job.judged_sha:
            with db.transaction(self.url) as session:
                pulls.check(session, check_id=job.check_id).judged_sha = found.head
        return replace(job, judged_sha=found.head)

    def _upsert_comment(self, job: Job, body: str) -> int:
        return post.upsert_comment(
            self.github,
            job.repo,
            job.number,
            body,
            comment_id=job.comment_id,
            installation_id=job.installation_id,
        )
