"""The service under test, on each store: the real app through Starlette's TestClient (``client``), or under a
real uvicorn server on loopback (``service``) where the server is the point (raw sockets, timeouts, several
clients, the schema fuzzer)."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from gate.api.app import create_app
from gate.api.background import serving
from gate.store import db, queries
from tests.gate import gitrepo

TOKEN = "fg_test-token"  # the operator's: admin role, any machine (official verdicts)
RUNNER_TOKEN = "fg_runner-token"  # runner-1's: runner role, bound to machine runner-1


@pytest.fixture
def repo(tmp_path):
    return gitrepo.base_and_head(tmp_path / "repo", policy='compare = ["assembled"]\n')


@pytest.fixture
def stack(store_url, repo):
    """(None, store URL, repo): the service's store with an admin token and a runner token, no server."""
    with db.transaction(store_url) as session:
        queries.create_token(session, name="operator", secret=TOKEN, role="admin")
        queries.create_token(session, name="runner-1", secret=RUNNER_TOKEN, machine="runner-1")
    return None, store_url, repo


@pytest.fixture
def service(stack):
    """(base URL, store URL, repo): the same store served by a real uvicorn server on loopback."""
    _, store_url, repo = stack
    with serving(create_app(database_url=store_url, repo=repo[0])) as url:
        yield url, store_url, repo


@pytest.fixture
def client(stack):
    """The admin's client of the app, in process (lifespan included); a server error is a 500, as served."""
    _, store_url, repo = stack
    app = create_app(database_url=store_url, repo=repo[0])
    headers = {"Authorization": f"Bearer {TOKEN}"}
    with TestClient(app, headers=headers, raise_server_exceptions=False) as c:
        yield c
