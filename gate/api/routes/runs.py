"""Results in: ``POST /api/runs`` (a runner's bundle, one transaction), ``GET /api/runs``."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, HTTPException, Query, Request, status
from fastapi.concurrency import run_in_threadpool

from gate.api.schemas import EvaluationSummary, Problem, RunOut, UploadOut
from gate.domain.machines import host_of
from gate.ingest import bundle as bundles
from gate.services import results
from gate.store import queries
from gate.web import MachineQ, ReadSessionDep, RunnerDep

router = APIRouter(tags=["runs"])
_BUNDLE = {
    "required": True,
    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Bundle"}}},
}


def _validated(body: bytes, runner) -> list:
    try:
        bundle = bundles.parse(body)
        machine = bundle.machine.get("machine")
        # a machine's token uploads for its placements too (<machine>__node0, <machine>__interleaved)
        if runner.machine is not None and runner.machine not in (machine, host_of(str(machine))):
            raise HTTPException(
                status.HTTP_403_FORBIDDEN,
                f"token {runner.name!r} uploads for machine {runner.machine!r} and its placements only, "
                f"not {str(machine)[:100]!r}",
            )
        return bundles.runs(bundle)
    except bundles.IngestError as exc:
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, str(exc)) from None


@router.post(
    "/api/runs",
    status_code=status.HTTP_201_CREATED,
    responses={401: {"model": Problem}, 403: {"model": Problem}, 422: {"model": Problem}},
    openapi_extra={"requestBody": _BUNDLE},
)
async def upload(request: Request, runner: RunnerDep) -> UploadOut:
    """Store one machine's asv results and sidecar records (a ``Bundle``); identical content is stored once.

    The token is checked before the body is read, and the body is bounded (413 past the service's
    ``FUSEGATE_MAX_UPLOAD_BYTES``). The whole bundle is one transaction: a bundle with any malformed file stores
    nothing. Evaluations that involve an uploaded commit are recomputed and stored before the response.
    """
    body = await request.body()
    runs = await run_in_threadpool(_validated, body, runner)
    bot = request.app.state.bot
    arrival = await run_in_threadpool(
        results.arrived,
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
    session: ReadSessionDep,
    machine: MachineQ = None,
    commit: Annotated[str | None, Query(description="a full SHA", pattern="^[0-9a-f]{40}$")] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> list[RunOut]:
    """Stored runs, newest first."""
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
