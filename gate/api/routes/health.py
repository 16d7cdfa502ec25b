"""``GET /api/health``: the service is up and its store takes writes (what a load balancer or a container's
HEALTHCHECK should ask)."""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from fastapi import APIRouter, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field
from sqlalchemy.exc import SQLAlchemyError

from gate import git
from gate.store import db

router = APIRouter(tags=["health"])


class Health(StrEnum):
    """The service's or its repository's health."""

    OK = "ok"
    UNAVAILABLE = "unavailable"


class HealthOut(BaseModel):
    status: Health
    store: Literal["writable", "busy", "unavailable"] = Field(
        description="writable: a write transaction on the store just committed; busy: this process's writers "
        "held SQLite's write lock for 2 s (writes are going on)"
    )
    repo: Health = Field(
        Health.OK,
        description="the repository the policies and lineage are read from (FUSEGATE_REPO) is a git clone",
    )
    version: str = Field("", description="the service's fusegate version")
    detail: str = ""


def _repo_problem(repo) -> str:
    done = git.run(repo, "rev-parse", "--git-dir")
    if done.returncode:
        return (
            f"FUSEGATE_REPO is not a git repository ({done.stderr.strip()[:160]}): point it at a clone of the "
            "project, or no verdict can read its policy"
        )
    return ""


@router.get("/api/health", responses={503: {"model": HealthOut}})
async def health(request: Request) -> HealthOut:
    """200 when the store takes a write now and the repository is a git clone; 503 (with why) when not: a store
    read-only, full or unreachable, a FUSEGATE_REPO that is no repository. HEAD answers the same, without a body
    (uptime probes)."""
    version = request.app.version
    repo = await run_in_threadpool(_repo_problem, request.app.state.repo)
    try:
        took = await run_in_threadpool(db.writable, request.app.state.database_url)
    except SQLAlchemyError as exc:
        reason = str(getattr(exc, "orig", None) or exc).strip().splitlines()[0]
        out = HealthOut(
            status=Health.UNAVAILABLE,
            store="unavailable",
            repo=Health.UNAVAILABLE if repo else Health.OK,
            version=version,
            detail=f"the store takes no writes: {reason}",
        )
        return JSONResponse(out.model_dump(), status_code=503, headers={"Retry-After": "5"})
    store = "writable" if took else "busy"
    if repo:
        out = HealthOut(
            status=Health.UNAVAILABLE, store=store, repo=Health.UNAVAILABLE, version=version, detail=repo
        )
        return JSONResponse(out.model_dump(), status_code=503)
    return HealthOut(status=Health.OK, store=store, version=version)


router.add_api_route(
    "/api/health",
    health,
    methods=["HEAD"],
    operation_id="health_head",
    summary="Health (HEAD)",
    responses={503: {"model": HealthOut}},
)
