"""The PR bot under test: the real service (uvicorn, the worker thread) against the loopback GitHub server."""

from __future__ import annotations

import httpx
import pytest

from gate.api.app import create_app
from gate.api.background import serving
from gate.bot import report
from gate.ingest import asv_dir
from gate.settings import Settings
from gate.store import db, queries
from tests.gate import gitrepo
from tests.gate.bot import bench
from tests.gate.bot.bench import wait_for
from tests.gate.bot.loopback import FakeGitHub
from tests.gate.builders import measure_results

TOKEN = "fg_test-token"
REPO = "acme/robots"
POLICY = 'compare = ["assembled"]\nrequired_machines = ["runner-1"]\n'


def bundle(tmp_path, commit, **kw) -> dict:
    [b] = asv_dir.read(measure_results(tmp_path, commit, **kw))
    return b.model_dump()


@pytest.fixture
def github():
    fake = FakeGitHub(prefix="/api/v3")  # as GitHub Enterprise Server: the client's base URL carries a path
    with serving(fake.app()) as url:
        fake.url = url + fake.prefix
        yield fake


@pytest.fixture
def repo(tmp_path):
    return gitrepo.base_and_head(tmp_path / "repo", policy=POLICY)


class Bot:
    """The service's URL and store, an authenticated client, and helpers to deliver webhooks."""

    def __init__(self, url: str, store: str, github: FakeGitHub, repo, client: httpx.Client):
        self.url, self.store, self.github, self.client = url, store, github, client
        self.path, self.base, self.head = repo
        self._n = 0

    def deliver(self, event: str, payload: dict, *, delivery: str | None = None, secret: str = bench.SECRET):
        self._n += 1
        return bench.deliver(self.client, event, payload, delivery=delivery or f"d-{self._n}", secret=secret)

    def open_pr(self, *, number=7, base=None, head=None, action="opened", **kw):
        event = bench.pull_request_event(
            number=number, base=base or self.base, head=head or self.head, repo=REPO, action=action
        )
        return self.deliver("pull_request", event, **kw)

    def comment(self, login: str, body: str, *, number=7, action="created", **kw):
        """A comment on the pull request, as GitHub's ``issue_comment`` webhook delivers it."""
        self._n += 1
        event = bench.comment_event(
            number=number, login=login, body=body, comment_id=5000 + self._n, repo=REPO, action=action
        )
        return self.deliver("issue_comment", event, **kw)

    def statuses(self, sha: str | None = None, context: str = report.CONTEXT) -> list[dict]:
        return [s for s in self.github.statuses.get(sha or self.head, []) if s["context"] == context]

    def wait_status(
        self, state: str, sha: str | None = None, timeout: float = 60.0, context: str = report.CONTEXT
    ) -> dict:
        return wait_for(
            lambda: next((s for s in reversed(self.statuses(sha, context)) if s["state"] == state), None),
            f"a {state} {context} status on {(sha or self.head)[:12]}",
            timeout,
        )

    def comments(self, number=7) -> list[dict]:
        return self.github.comments.get(f"{REPO}#{number}", [])


def start_bot(store_url, repo, github, **settings) -> tuple:
    with db.transaction(store_url) as session:
        queries.create_token(session, name="runner-1", secret=TOKEN)
    values = dict(
        github_webhook_secret=bench.SECRET,
        github_api_url=github.url,
        github_token=github.token,
        bot_poll_s=0.2,
        github_backoff_s=0.05,
        public_url="http://gate.test",
    )
    return create_app(database_url=store_url, repo=repo[0], settings=Settings(**(values | settings)))


@pytest.fixture
def bot(store_url, repo, github):
    app = start_bot(store_url, repo, github)
    with (
        serving(app) as url,
        httpx.Client(base_url=url, timeout=60, headers={"Authorization": f"Bearer {TOKEN}"}) as client,
    ):
        yield Bot(url, store_url, github, repo, client)
