"""The verdict use case: evaluate (base, head) and store it, or read the latest stored one."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import fields
from pathlib import Path

from sqlalchemy.orm import Session

from gate import git
from gate.domain import ComparisonRecord, EvaluationRecord
from gate.evaluate import evaluate_and_store, is_stale
from gate.store import db, queries
from gate.store.models import Evaluation

_COMPARISON = [f.name for f in fields(ComparisonRecord)]
_EVALUATION = [f.name for f in fields(EvaluationRecord) if f.name not in ("comparisons", "stale")]


def record(evaluation: Evaluation, *, stale: bool = False) -> EvaluationRecord:
    """A stored evaluation as the domain record (detached from the session)."""
    return EvaluationRecord(
        **{name: getattr(evaluation, name) for name in _EVALUATION},
        comparisons=[
            ComparisonRecord(**{name: getattr(c, name) for name in _COMPARISON})
            for c in evaluation.comparisons
        ],
        stale=stale,
    )


def evaluate(
    session: Session,
    *,
    repo: Path,
    base_sha: str,
    head_sha: str,
    extra_impls: Iterable[str] = (),
    policy_sha: str | None = None,
) -> EvaluationRecord:
    """Judge (base, head) now with the base commit's policy (or ``policy_sha``'s), store it, return it."""
    stored = evaluate_and_store(
        session,
        repo=repo,
        base_sha=base_sha,
        head_sha=head_sha,
        extra_impls=extra_impls,
        policy_sha=policy_sha,
    )
    return record(stored)


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
    with db.transaction(url) as session:
        evaluation = queries.latest_evaluation(session, base_sha=base_sha, head_sha=head_sha)
        if evaluation is None or is_stale(session, evaluation):
            evaluation = evaluate_and_store(session, repo=repo, base_sha=base_sha, head_sha=head_sha)
        return record(evaluation)
