"""``POST /api/github/webhook``: signatures, events, malformed bodies and redeliveries, against the real service."""

from __future__ import annotations

import httpx
from sqlalchemy import func, select

from gate.api.background import serving
from gate.api.routes.github import signature, verify
from gate.settings import Settings
from gate.store import db
from gate.store.models import BotJob, PullCheck, PullRequest, WebhookDelivery
from tests.gate.bot import bench
from tests.gate.bot.conftest import REPO, wait_for


def _stored(url) -> dict[str, int]:
    with db.transaction(url, write=False) as session:
        return {
            m.__tablename__: session.scalar(select(func.count()).select_from(m))
            for m in (WebhookDelivery, PullRequest, PullCheck, BotJob)
        }


NOTHING = {"webhook_delivery": 0, "pull_request": 0, "pull_check": 0, "bot_job": 0}


def test_the_signature_is_githubs():
    """GitHub's own example (docs, "Validating webhook deliveries"): the secret "It's a Secret to Everybody"
    signs "Hello, World!" as below."""
    want = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
    assert signature("It's a Secret to Everybody", b"Hello, World!") == want
    assert verify("It's a Secret to Everybody", b"Hello, World!", want)
    assert not verify("It's a Secret to Everybody", b"Hello, World?", want)
    assert not verify("It's a Secret to Everybody", b"Hello, World!", None)


def test_a_bad_or_missing_signature_is_401_and_stores_nothing(bot):
    event = bench.pull_request_event(number=1, base=bot.base, head=bot.head)
    assert bot.deliver("pull_request", event, secret="not-the-secret").status_code == 401
    body = b'{"action": "opened"}'
    for headers in (
        {},
        {"X-Hub-Signature-256": "sha1=abc"},
        {"X-Hub-Signature-256": bench.sign(body + b" ")},
    ):
        r = bot.client.post(
            "/api/github/webhook",
            content=body,
            headers={"X-GitHub-Event": "pull_request", "X-GitHub-Delivery": "d", **headers},
        )
        assert r.status_code == 401 and "X-Hub-Signature-256" in r.json()["detail"]
    assert _stored(bot.store) == NOTHING
    assert bot.github.calls == []


def test_malformed_json_and_payloads_are_400_and_store_nothing(bot):
    for body in (b"{not json", b"[1, 2]", b"\xff\xfe"):
        r = bot.client.post(
            "/api/github/webhook",
            content=body,
            headers={
                "X-GitHub-Event": "pull_request",
                "X-GitHub-Delivery": "d",
                "X-Hub-Signature-256": bench.sign(body),
            },
        )
        assert r.status_code == 400, (body, r.text)
    event = bench.pull_request_event(number=1, base=bot.base, head=bot.head)
    del event["pull_request"]["head"]["sha"]
    r = bot.deliver("pull_request", event)
    assert r.status_code == 400 and "pull_request.head.sha" in r.json()["detail"]
    assert _stored(bot.store) == NOTHING


def test_ping_is_answered_and_other_events_are_ignored_with_202(bot):
    r = bot.deliver("ping", {"zen": "Keep it logically awesome.", "hook_id": 1})
    assert r.status_code == 200 and r.json()["status"] == "pong"
    r = bot.deliver("push", {"ref": "refs/heads/main"})
    assert r.status_code == 202 and r.json()["status"] == "ignored"
    closed = bench.pull_request_event(number=1, base=bot.base, head=bot.head, action="closed")
    r = bot.deliver("pull_request", closed)
    assert r.status_code == 202 and r.json()["status"] == "ignored"
    assert _stored(bot.store) == NOTHING


def test_a_redelivery_is_answered_once_and_queues_nothing_more(bot):
    first = bot.open_pr(delivery="guid-1")
    assert first.status_code == 202 and first.json()["status"] == "queued"
    bot.wait_status("pending")
    again = bot.open_pr(delivery="guid-1")
    assert again.status_code == 200 and again.json()["status"] == "duplicate"
    assert _stored(bot.store) == {"webhook_delivery": 1, "pull_request": 1, "pull_check": 1, "bot_job": 1}
    assert len(bot.statuses()) == 1


def test_the_webhook_refuses_to_work_unconfigured(store_url, repo):
    from gate.api.app import create_app

    app = create_app(database_url=store_url, repo=repo[0], settings=Settings(github_webhook_secret=None))
    with serving(app) as url:
        body = b"{}"
        r = httpx.post(
            f"{url}/api/github/webhook",
            content=body,
            headers={
                "X-GitHub-Event": "ping",
                "X-GitHub-Delivery": "d",
                "X-Hub-Signature-256": bench.sign(body),
            },
        )
    assert r.status_code == 503 and "FUSEGATE_GITHUB_WEBHOOK_SECRET" in r.json()["detail"]


def test_a_half_configured_bot_is_refused_at_startup(store_url, repo):
    import pytest

    from gate.api.app import create_app
    from gate.settings import SettingsError

    with pytest.raises(SettingsError, match="FUSEGATE_GITHUB_TOKEN"):
        create_app(database_url=store_url, repo=repo[0], settings=Settings(github_webhook_secret="s"))


def test_webhooks_never_wait_on_github(bot):
    """GitHub failing every call: the webhook is still answered at once, and the job waits in the queue."""
    bot.github.fail("/statuses/", 502, times=1000)
    r = bot.open_pr()
    assert r.status_code == 202
    wait_for(lambda: len(bot.github.calls_to("/statuses/")) >= 5, "the worker's retries")
    with db.transaction(bot.store, write=False) as session:
        job = session.scalar(select(BotJob))
        assert job.done_at is None
    wait_for(lambda: _job_error(bot.store), "the job to record its error")


def _job_error(url) -> str:
    with db.transaction(url, write=False) as session:
        return session.scalar(select(BotJob.error))


def _commands(url) -> list[tuple]:
    from gate.store.models import PullCommand

    with db.transaction(url, write=False) as session:
        rows = session.execute(select(PullCommand.login, PullCommand.action, PullCommand.head_sha)).all()
        return [tuple(r) for r in rows]


def test_a_comment_command_on_a_pull_request_is_recorded_and_its_check_queued(bot):
    bot.github.fail("/", 502, times=10_000)  # the handler never calls GitHub: nothing it answers waits on it
    bot.open_pr()
    command = "/fusegate accept g1_walk assembled -- by design"
    r = bot.comment("alice", command, delivery="c-1")
    assert r.status_code == 202 and r.json()["status"] == "queued", r.text
    assert r.json()["check_id"] is not None and "command by alice" in r.json()["detail"]
    again = bot.comment("alice", command, delivery="c-1")
    assert again.status_code == 200 and again.json()["status"] == "duplicate"
    assert bot.comment("alice", command + ", edited", action="edited").json()["status"] == "queued"
    assert _commands(bot.store) == [("alice", "created", bot.head), ("alice", "edited", bot.head)]
    assert _stored(bot.store)["bot_job"] == 3  # the pull request's, and one per command
    assert not bot.github.calls_to("/collaborators/")


def test_comments_that_are_not_commands_for_a_watched_pull_request_are_ignored(bot):
    bot.open_pr()
    ignored = {
        "no command": bench.comment_event(number=7, login="a", body="looks good", comment_id=1, repo=REPO),
        "deleted": bench.comment_event(
            number=7,
            login="a",
            body="/fusegate accept a b -- c",
            comment_id=2,
            repo=REPO,
            action="deleted",
        ),
        "the bot's own": bench.comment_event(
            number=7,
            login="a",
            body="<!-- fusegate:pr-comment -->\n/fusegate accept a b -- c",
            comment_id=3,
            repo=REPO,
        ),
    }
    issue = bench.comment_event(
        number=7, login="a", body="/fusegate accept a b -- c", comment_id=4, repo=REPO
    )
    del issue["issue"]["pull_request"]
    ignored["on an issue"] = issue
    for why, event in ignored.items():
        r = bot.deliver("issue_comment", event)
        assert r.status_code == 202 and r.json()["status"] == "ignored", why
    unknown = bench.comment_event(
        number=8, login="a", body="/fusegate accept a b -- c", comment_id=5, repo=REPO
    )
    r = bot.deliver("issue_comment", unknown)
    assert r.json()["status"] == "ignored" and "not a pull request the bot watches" in r.json()["detail"]
    assert _commands(bot.store) == []


def test_a_malformed_comment_event_is_400(bot):
    bot.open_pr()
    event = bench.comment_event(
        number=7, login="a", body="/fusegate accept a b -- c", comment_id=1, repo=REPO
    )
    event["comment"]["id"] = "one"
    r = bot.deliver("issue_comment", event)
    assert r.status_code == 400 and "comment.id must be int" in r.json()["detail"]
    event["comment"]["id"], event["comment"]["updated_at"] = 1, "yesterday"
    r = bot.deliver("issue_comment", event)
    assert r.status_code == 400 and "not a time" in r.json()["detail"]
    assert _commands(bot.store) == []
