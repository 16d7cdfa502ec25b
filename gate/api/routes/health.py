"""``GET /api/health``: the service is up and its store takes writes (what a load balancer or a container's
HEALTHCHECK should ask)."""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field
from sqlalchemy.exc import SQLAlchemyError

from gate.store import db

router = APIRouter(tags=["health"])


class HealthOut(BaseModel):
    status: Literal["ok", "unavailable"]
    store: Literal["writable", "busy", "unavailable"] = Field(
        description="writable: a write transaction on the store just committed; busy: this process's writers "
        "held SQLite's write lock for 2 s (writes are going on)"
    )
    detail: str = ""


@router.get("/api/health", responses={503: {"model": HealthOut}})
async def health(request: Request) -> HealthOut:
    """200 when the store takes a write now; 503 (with why) when it does not: read-only, full, unreachable."""
    try:
        took = await run_in_threadpool(db.writable, request.app.state.database_url)
    except SQLAlchemyError as exc:
        reason = str(getattr(exc, "orig", None) or exc).strip().splitlines()[0]
        out = HealthOut(
            status="unavailable", store="unavailable", detail=f"the store takes no writes: {reason}"
        )
        return JSONResponse(out.model_dump(), status_code=503, headers={"Retry-After": "5"})
    return HealthOut(status="ok", store="writable" if took else "busy")
