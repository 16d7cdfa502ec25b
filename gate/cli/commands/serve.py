"""``fusegate serve``: migrate the store (a start-up step), then serve the API and the dashboard."""

from __future__ import annotations

import argparse
import os

from gate.cli import output
from gate.cli.options import (
    db_option,
    positive_int,
    repo_path,
    settings,
)

NAME = ("serve",)
HELP = "run the gate service (FastAPI, uvicorn)"


def arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--workers", type=positive_int, default=1, help="uvicorn worker processes (default 1)")
    p.add_argument(
        "--no-upgrade", action="store_true", help="do not migrate the store first (fusegate db upgrade did)"
    )
    p.add_argument(
        "--create",
        action="store_true",
        help="create the SQLite store if it does not exist (a first start); without it a missing store is refused",
    )
    db_option(p)


def run(args: argparse.Namespace) -> int:
    import uvicorn

    from gate.store import db

    url = args.db or settings().database_url
    if not args.no_upgrade:
        db.upgrade(url, create=args.create)  # without --create a mistyped path is refused, not served empty
    db.check(url)  # before any worker starts: one clear message, not one per worker
    output.console(stderr=True).print(
        f"fusegate serving {url} on http://{args.host}:{args.port} (docs: /docs)"
    )
    if args.workers == 1:
        from gate.api.app import create_app

        app = create_app(database_url=url, repo=repo_path())
        uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
        return 0
    # Worker processes build their own app from the settings (the service is stateless; the store is shared).
    os.environ["FUSEGATE_DATABASE_URL"], os.environ["FUSEGATE_REPO"] = url, str(repo_path())
    uvicorn.run(
        "gate.api.app:create_app",
        factory=True,
        workers=args.workers,
        host=args.host,
        port=args.port,
        log_level="warning",
    )
    return 0
