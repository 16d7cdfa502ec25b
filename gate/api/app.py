"""FastAPI app factory: ``create_app(database_url=..., repo=...)``; ``fusegate serve`` runs it under uvicorn."""

from __future__ import annotations

import logging
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from gate.api.routes import evaluations, health, machines, runs
from gate.api.settings import Settings
from gate.store import db

log = logging.getLogger("fusegate")


def create_app(*, database_url: str | None = None, repo: Path | None = None) -> FastAPI:
    settings = Settings()
    app = FastAPI(
        title="fusegate",
        version="1",
        description="Performance-regression gate for fused RL-environment kernels: results in, verdicts out.",
    )
    app.state.database_url = database_url or settings.database_url
    app.state.repo = (repo or settings.repo).resolve()
    db.upgrade(app.state.database_url)
    for router in (health.router, runs.router, evaluations.router, machines.router):
        app.include_router(router)

    @app.exception_handler(Exception)
    async def internal_error(request: Request, exc: Exception) -> JSONResponse:
        log.exception("unhandled error on %s %s", request.method, request.url.path)
        return JSONResponse(status_code=500, content={"detail": f"internal error: {type(exc).__name__}"})

    return app
