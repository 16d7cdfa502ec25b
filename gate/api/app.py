"""FastAPI app factory: ``create_app(database_url=..., repo=...)``; ``fusegate serve`` runs it under uvicorn."""

from __future__ import annotations

from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import FastAPI

from gate.api import docs, guards
from gate.api.routes import evaluations, github, health, machines, pulls, runs
from gate.dashboard import api as dashboard_api
from gate.dashboard import pages
from gate.settings import Settings
from gate.store import db


def _bot(settings: Settings, url: str, repo: Path):
    """The PR bot's worker when the settings enable it, else None (the webhook then answers 503)."""
    if not settings.bot_enabled():
        return None
    from gate.bot.github import AppAuth, GitHub, Retry, TokenAuth
    from gate.bot.worker import Worker

    if settings.github_token is not None:
        auth = TokenAuth(settings.github_token.get_secret_value())
    else:
        auth = AppAuth(
            settings.github_app_id,
            settings.github_app_private_key_file.read_text(),
            installation_id=settings.github_app_installation_id,
        )
    client = GitHub(
        base_url=settings.github_api_url,
        auth=auth,
        retry=Retry(attempts=settings.github_attempts, backoff=settings.github_backoff_s),
    )
    return Worker(
        url=url,
        repo=repo,
        github=client,
        public_url=settings.public_url,
        window_s=settings.bot_window_s,
        poll_s=settings.bot_poll_s,
    )


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("fusegate")
    except PackageNotFoundError:
        return "unknown"


def create_app(
    *, database_url: str | None = None, repo: Path | None = None, settings: Settings | None = None
) -> FastAPI:
    settings = settings or Settings()
    url = database_url or settings.database_url
    repo = (repo or settings.repo).resolve()
    bot = _bot(settings, url, repo)

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        if bot is not None:
            bot.start()
        yield
        if bot is not None:
            bot.stop()

    app = FastAPI(
        title="fusegate",
        version=_version(),
        description="Performance-regression gate for fused RL-environment kernels: results in, verdicts out.",
        lifespan=lifespan,
        docs_url=None,  # gate.api.docs serves Swagger UI from local files
        redoc_url=None,
    )
    app.state.database_url = url
    app.state.repo = repo
    app.state.main_branch = settings.main_branch
    app.state.bot = bot
    app.state.webhook_secret = (
        settings.github_webhook_secret.get_secret_value() if settings.github_webhook_secret else ""
    )
    db.check(url)  # migrations are a step before the service (fusegate db upgrade), not a side effect here
    for router in (
        health.router,
        runs.router,
        evaluations.router,
        machines.router,
        github.router,
        pulls.router,
        dashboard_api.router,
    ):
        app.include_router(router)
    docs.install(app)  # before the dashboard's /static mount
    pages.install(app)  # the dashboard's pages, static files and HTML error pages
    limits = {
        ("POST", "/api/runs"): settings.max_upload_bytes,  # read only after the token is checked
        ("POST", "/api/github/webhook"): settings.max_webhook_bytes,  # read before its signature is checked
    }

    def limit(method: str, path: str) -> int:
        return limits.get((method, path), settings.max_body_bytes)

    # Outermost of the app's own layers: limits, target checks, errors as problems, security headers.
    app.add_middleware(guards.Guard, limit=limit, openapi=app.openapi)
    return app
