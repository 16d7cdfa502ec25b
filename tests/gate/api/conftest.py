"""The service under test: the real app under a real uvicorn server on loopback, on each store."""

from __future__ import annotations

import socket
import threading
import time

import httpx
import pytest
import uvicorn

from gate.api.app import create_app
from gate.store import db, queries
from tests.gate import gitrepo

TOKEN = "fg_test-token"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def repo(tmp_path):
    path = tmp_path / "repo"
    base = gitrepo.commit(path, policy='compare = ["assembled"]\n', message="base")
    head = gitrepo.commit(path, message="head")
    return path, base, head


@pytest.fixture
def service(store_url, repo):
    """(base URL, store URL, repo): a running server with one runner token."""
    with db.transaction(store_url) as session:
        queries.create_token(session, name="runner-1", secret=TOKEN)
    port = _free_port()
    server = uvicorn.Server(
        uvicorn.Config(
            create_app(database_url=store_url, repo=repo[0]), host="127.0.0.1", port=port, log_level="error"
        )
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline:
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.02)
    yield f"http://127.0.0.1:{port}", store_url, repo
    server.should_exit = True
    thread.join(10)


@pytest.fixture
def client(service):
    with httpx.Client(base_url=service[0], timeout=60, headers={"Authorization": f"Bearer {TOKEN}"}) as c:
        yield c
