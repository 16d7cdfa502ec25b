"""The service under test: the real app under a real uvicorn server on loopback, on each store."""

from __future__ import annotations

import httpx
import pytest

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
def service(store_url, repo):
    """(base URL, store URL, repo): a running server with an admin token and a runner token."""
    with db.transaction(store_url) as session:
        queries.create_token(session, name="operator", secret=TOKEN, role="admin")
        queries.create_token(session, name="runner-1", secret=RUNNER_TOKEN, machine="runner-1")
    with serving(create_app(database_url=store_url, repo=repo[0])) as url:
        yield url, store_url, repo


@pytest.fixture
def client(service):
    with httpx.Client(base_url=service[0], timeout=60, headers={"Authorization": f"Bearer {TOKEN}"}) as c:
        yield c
