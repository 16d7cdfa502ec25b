"""Verdicts: trigger an evaluation, read the latest for (base, head), list them."""

from __future__ import annotations

from fastapi import APIRouter, HTTPException, Request, status

from gate.api.schemas import EvaluationOut, EvaluationRequest, EvaluationSummary, Problem
from gate.services import verdicts
from gate.store import queries
from gate.web import ReadSessionDep, RunnerDep, SessionDep, commit_sha, latest_verdict

router = APIRouter(tags=["evaluations"])


@router.post(
    "/api/evaluations",
    status_code=status.HTTP_201_CREATED,
    responses={401: {"model": Problem}, 422: {"model": Problem}},
)
def trigger(
    body: EvaluationRequest, request: Request, session: SessionDep, _runner: RunnerDep
) -> EvaluationOut:
    """Evaluate (base, head) now with the policy of the base commit, store and return the verdict."""
    base, head = commit_sha(request, body.base), commit_sha(request, body.head)
    evaluation = verdicts.evaluate(
        session, repo=request.app.state.repo, base_sha=base, head_sha=head, extra_impls=body.impl
    )
    return EvaluationOut.model_validate(evaluation)


@router.get("/api/evaluations")
def list_evaluations(session: ReadSessionDep, limit: int = 50) -> list[EvaluationSummary]:
    """Stored evaluations, newest first."""
    if not 1 <= limit <= 500:
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, f"limit must be in 1..500, got {limit}")
    return [EvaluationSummary.model_validate(e) for e, _, _ in queries.evaluations(session, limit=limit)]


@router.get("/api/evaluations/{evaluation_id}", responses={404: {"model": Problem}})
def read(evaluation_id: int, session: ReadSessionDep) -> EvaluationOut:
    evaluation = verdicts.stored(session, evaluation_id=evaluation_id)
    if evaluation is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"no evaluation {evaluation_id}")
    return EvaluationOut.model_validate(evaluation)


@router.get("/api/verdicts/{base}/{head}", responses={404: {"model": Problem}})
def verdict(base: str, head: str, request: Request, session: ReadSessionDep) -> EvaluationOut:
    """The latest stored verdict for (base, head): a read, nothing is computed."""
    return EvaluationOut.model_validate(latest_verdict(request, session, base, head))
