"""Results in: ``POST /api/runs`` (a runner's bundle, one transaction), ``GET /api/runs``."""

from __future__ import annotations

from fastapi import APIRouter, HTTPException, Request, status

from gate.api.schemas import Bundle, EvaluationSummary, Problem, RunOut, UploadOut
from gate.ingest import bundle as bundles
from gate.services import results
from gate.store import queries
from gate.web import ReadSessionDep, RunnerDep

router = APIRouter(tags=["runs"])


@router.post(
    "/api/runs",
    status_code=status.HTTP_201_CREATED,
    responses={401: {"model": Problem}, 403: {"model": Problem}, 422: {"model": Problem}},
)
def upload(body: Bundle, request: Request, runner: RunnerDep) -> UploadOut:
    """Store one machine's asv results and sidecar records; identical content is stored once.

    The whole bundle is one transaction: a bundle with any malformed file stores nothing. Evaluations that involve
    an uploaded commit are recomputed and stored before the response.
    """
    machine = body.machine.get("machine")
    if runner.machine is not None and machine != runner.machine:
        raise HTTPException(
            status.HTTP_403_FORBIDDEN,
            f"token {runner.name!r} uploads for machine {runner.machine!r} only, not {machine!r}",
        )
    try:
        runs = bundles.runs(body)
    except bundles.IngestError as exc:
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, str(exc)) from None
    bot = request.app.state.bot
    arrival = results.arrived(
        request.app.state.database_url,
        repo=request.app.state.repo,
        runs=runs,
        wake=bot.wake if bot is not None else None,
    )
    return UploadOut(
        stored=arrival.stored,
        unchanged=arrival.unchanged,
        results=arrival.results,
        evaluations=[EvaluationSummary.model_validate(e) for e in arrival.evaluations],
    )


@router.get("/api/runs")
def list_runs(
    session: ReadSessionDep, machine: str | None = None, commit: str | None = None, limit: int = 100
) -> list[RunOut]:
    """Stored runs, newest first."""
    if not 1 <= limit <= 1000:
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, f"limit must be in 1..1000, got {limit}")
    return [
        RunOut(
            id=run.id,
            machine=m,
            commit=sha,
            env_name=run.env_name,
            placement=placement,
            started_at=run.started_at,
            uploaded_at=run.uploaded_at,
        )
        for run, m, sha, placement in queries.runs(session, machine=machine, commit_sha=commit, limit=limit)
    ]
