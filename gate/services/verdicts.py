"""The verdict use case: evaluate (base, head) and store it, or read the latest stored one."""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import fields
from datetime import timedelta
from pathlib import Path

from sqlalchemy.orm import Session

from gate import git
from gate.domain.evaluations import Acceptance, ComparisonRecord, EvaluationRecord
from gate.evaluate import Outcome, judge
from gate.store import acceptances as accepted
from gate.store import db, queries
from gate.store.columns import now, utc
from gate.store.models import Evaluation

_COMPARISON = [f.name for f in fields(ComparisonRecord)]
_EVALUATION = [
    f.name for f in fields(EvaluationRecord) if f.name not in ("comparisons", "stale", "acceptances")
]


def record(evaluation: Evaluation, *, stale: bool = False) -> EvaluationRecord:
    """A stored evaluation as the domain record (detached from the session)."""
    return EvaluationRecord(
        **{name: getattr(evaluation, name) for name in _EVALUATION},
        comparisons=[
            ComparisonRecord(**{name: getattr(c, name) for name in _COMPARISON})
            for c in evaluation.comparisons
        ],
        stale=stale,
        acceptances=accepted.from_json(evaluation.acceptances),
    )


def evaluate(
    url: str,
    *,
    repo: Path,
    base_sha: str,
    head_sha: str,
    extra_impls: Iterable[str] = (),
    policy_sha: str | None = None,
    official: bool = True,
    requested_by: str | None = None,
    acceptances: Iterable[Acceptance] | None = None,
) -> EvaluationRecord:
    """Judge (base, head) now with the base commit's policy (or ``policy_sha``'s) and the head's acceptances on
    record (or ``acceptances``), store it, return it.

    Judging reads in one transaction and storing writes in another, so on SQLite the write lock is held for the
    insert only, never while git runs or the statistics are computed. ``official=False`` stores an ad-hoc
    evaluation apart from the served verdict."""
    started = now()
    shas = {base_sha, head_sha}
    with db.transaction(url, write=False) as session:
        seen = queries.uploads(session, commit_shas=shas)  # first: what the judging below can have read
        seen_accepted = accepted.ids(session, head_sha=head_sha)
        on_record = (
            accepted.for_head(session, head_sha=head_sha) if acceptances is None else list(acceptances)
        )
        outcome = judge(
            session,
            repo=repo,
            base_sha=base_sha,
            head_sha=head_sha,
            extra_impls=extra_impls,
            policy_sha=policy_sha,
            acceptances=on_record,
        )
    with db.transaction(url) as session:
        # A run stamped before ``started`` but committed after the judging read would leave this verdict looking
        # fresh; dated just before the earliest run it missed, it is stale, and the bot or a reader evaluates again.
        # The same for an acceptance recorded meanwhile.
        missed = [at for run, at in queries.uploads(session, commit_shas=shas).items() if run not in seen]
        if acceptances is None:
            missed += [
                at for i, at in accepted.ids(session, head_sha=head_sha).items() if i not in seen_accepted
            ]
        if missed:
            started = min(started, utc(min(missed)) - timedelta(microseconds=1))
        stored = save(
            session,
            outcome,
            base_sha=base_sha,
            head_sha=head_sha,
            started=started,
            official=official,
            requested_by=requested_by,
        )
        return record(stored)


def save(
    session: Session,
    outcome: Outcome,
    *,
    base_sha: str,
    head_sha: str,
    started,
    official: bool = True,
    requested_by: str | None = None,
):
    """Store a judged outcome, stamped with the time its evaluation started, so results that arrived while it ran
    make it stale (``is_stale``). ``official=False``: an ad-hoc evaluation, kept apart from the verdict that the
    bot, the dashboard and ``GET /api/verdicts`` read."""
    return queries.save_evaluation(
        session,
        base_sha=base_sha,
        head_sha=head_sha,
        verdict=outcome.verdict,
        policy_source=outcome.policy_source,
        policy=outcome.policy,
        reasons=outcome.reasons,
        comparisons=outcome.comparisons,
        created_at=started,
        official=official,
        requested_by=requested_by,
        acceptances=accepted.to_json(outcome.acceptances),
    )


def evaluate_and_store(session: Session, *, repo: Path, base_sha: str, head_sha: str, **kw):
    """``judge`` and ``save`` in one session (tools and tests; the service judges and saves in two transactions)."""
    started = now()
    outcome = judge(session, repo=repo, base_sha=base_sha, head_sha=head_sha, **kw)
    return save(session, outcome, base_sha=base_sha, head_sha=head_sha, started=started)


def is_stale(session: Session, evaluation) -> bool:
    """True when results of its base or head, or an acceptance of its head, arrived after the evaluation started."""
    last = queries.last_upload(session, commit_shas={evaluation.base_sha, evaluation.head_sha})
    if last is not None and utc(last) > utc(evaluation.created_at):
        return True
    last = accepted.last(session, head_sha=evaluation.head_sha)
    return last is not None and utc(last) > utc(evaluation.created_at)


class _Flight:
    """One (store, base, head)'s re-evaluations in this process: callers take tickets; a run covers every ticket
    taken before it started, so callers that arrive while one runs share the next run instead of each running
    their own. It lives while callers use it (``users``), so finished pairs leave nothing behind."""

    def __init__(self) -> None:
        self.changed = threading.Condition()
        self.users = 0  # callers inside reevaluate (counted under _FLIGHTS_LOCK)
        self.taken = 0  # tickets handed out
        self.covered = 0  # tickets covered by the newest finished run
        self.running = False
        self.result: EvaluationRecord | None = None


_FLIGHTS: dict[tuple[str, str, str], _Flight] = {}
_FLIGHTS_LOCK = threading.Lock()


def reevaluate(url: str, *, repo: Path, base_sha: str, head_sha: str) -> EvaluationRecord:
    """The official verdict of (base, head) evaluated again, by a run that started after this call: what results
    arriving ask for. Concurrent arrivals for the same pair share runs (20 uploaders of one commit cost about two
    evaluations' time each, not twenty), and each still gets a verdict that saw its results."""
    key = (url, base_sha, head_sha)
    with _FLIGHTS_LOCK:
        flight = _FLIGHTS.setdefault(key, _Flight())
        flight.users += 1
    try:
        return _take_a_run(flight, lambda: evaluate(url, repo=repo, base_sha=base_sha, head_sha=head_sha))
    finally:
        with _FLIGHTS_LOCK:
            flight.users -= 1
            if not flight.users:
                del _FLIGHTS[key]


def _take_a_run(flight: _Flight, run) -> EvaluationRecord:
    with flight.changed:
        flight.taken += 1
        ticket = flight.taken
        while flight.covered < ticket and flight.running:
            flight.changed.wait()
        if flight.covered >= ticket:
            return flight.result
        flight.running, covering = True, flight.taken
    result = None
    try:
        result = run()
        return result
    finally:
        with flight.changed:
            flight.running = False
            if result is not None:
                flight.covered, flight.result = covering, result
            flight.changed.notify_all()


def stored(session: Session, *, evaluation_id: int) -> EvaluationRecord | None:
    evaluation = queries.evaluation(session, evaluation_id=evaluation_id)
    return None if evaluation is None else record(evaluation)


def latest(session: Session, *, repo: Path, base: str, head: str) -> tuple[str, str, EvaluationRecord | None]:
    """(base SHA, head SHA, the latest stored verdict or None): a read, nothing is computed. Refs are resolved in
    ``repo``; one that names no commit raises ``git.RefError``."""
    base_sha, head_sha = git.resolve(repo, base), git.resolve(repo, head)
    evaluation = queries.latest_evaluation(session, base_sha=base_sha, head_sha=head_sha)
    if evaluation is None:
        return base_sha, head_sha, None
    return base_sha, head_sha, record(evaluation, stale=is_stale(session, evaluation))


def current(url: str, *, repo: Path, base_sha: str, head_sha: str) -> EvaluationRecord:
    """The latest verdict of (base, head), evaluated again first when there is none or results arrived since."""
    with db.transaction(url, write=False) as session:
        evaluation = queries.latest_evaluation(session, base_sha=base_sha, head_sha=head_sha)
        if evaluation is not None and not is_stale(session, evaluation):
            return record(evaluation)
    return evaluate(url, repo=repo, base_sha=base_sha, head_sha=head_sha)


def implementations(session: Session, *, commit_sha: str) -> set[str]:
    """The implementations a commit has results for (what ``extra_impls`` may name)."""
    return queries.implementations(session, commit_sha=commit_sha)
