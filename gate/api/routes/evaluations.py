"""Verdicts: trigger an evaluation, read the latest for (base, head), list them."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, HTTPException, Query, Request, status

from gate.api.schemas import EvaluationOut, EvaluationRequest, EvaluationSummary, Problem
from gate.services import verdicts
from gate.store import db, queries
from gate.web import Id, ReadSessionDep, RunnerDep, commit_sha, latest_verdict

router = APIRouter(tags=["evaluations"])


@router.post(
    "/api/evaluations",
    status_code=status.HTTP_201_CREATED,
    responses={401: {"model": Problem}, 422: {"model": Problem}},
)
def trigger(body: EvaluationRequest, request: Request, token: RunnerDep) -> EvaluationOut:
    """Evaluate (base, head) now with the policy of the base commit, store and return the verdict.

    With an admin token the evaluation is official: it becomes the verdict that ``GET /api/verdicts``, the
    dashboard and the PR bot read. With a runner token it is ad hoc (``official: false``): stored apart, listed
    and readable by id, never served as the verdict. ``impl`` names implementations the head has results for.
    """
    base, head = commit_sha(request, body.base), commit_sha(request, body.head)
    url = request.app.state.database_url
    if body.impl:
        with db.transaction(url, write=False) as session:
            known = verdicts.implementations(session, commit_sha=head)
        unknown = [impl for impl in body.impl if impl not in known]
        if unknown:
            raise HTTPException(
                status.HTTP_422_UNPROCESSABLE_CONTENT,
                f"impl {', '.join(map(repr, unknown))} has no results for head {head[:12]}; "
                f"it has: {', '.join(sorted(known)) or 'none'}",
            )
    evaluation = verdicts.evaluate(
        url,
        repo=request.app.state.repo,
        base_sha=base,
        head_sha=head,
        extra_impls=body.impl,
        official=token.role == "admin",
        requested_by=token.name,
    )
    return EvaluationOut.model_validate(evaluation)


@router.get("/api/evaluations")
def list_evaluations(
    session: ReadSessionDep, limit: Annotated[int, Query(ge=1, le=500)] = 50
) -> list[EvaluationSummary]:
    """Stored evaluations, official and ad hoc, newest first."""
    return [EvaluationSummary.model_validate(e) for e, _, _ in queries.evaluations(session, limit=limit)]


@router.get("/api/evaluations/{evaluation_id}", responses={404: {"model": Problem}})
def read(evaluation_id: Id, session: ReadSessionDep) -> EvaluationOut:
    evaluation = verdicts.stored(session, evaluation_id=evaluation_id)
    if evaluation is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"no evaluation {evaluation_id}")
    return EvaluationOut.model_validate(evaluation)


@router.get("/api/verdicts/{base}/{head}", responses={404: {"model": Problem}})
def verdict(base: str, head: str, request: Request, session: ReadSessionDep) -> EvaluationOut:
    """The latest stored verdict for (base, head): a read, nothing is computed."""
    return EvaluationOut.model_validate(latest_verdict(request, session, base, head))
