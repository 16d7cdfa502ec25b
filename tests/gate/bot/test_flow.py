"""The PR bot end to end: webhook -> pending status -> results -> verdict status, one PR comment edited in place."""

from __future__ import annotations

import re
import time

import httpx
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from gate import cli
from gate.api.background import serving
from gate.bot import report
from tests.gate import gitrepo
from tests.gate.bot import bench
from tests.gate.bot.conftest import REPO, TOKEN, Bot, bundle, start_bot, wait_for


def _upload(bot, tmp_path, **kw):
    """The base as it was, the head with ``kw``'s effects (a change the pull request makes)."""
    for name, sha in (("base", bot.base), ("head", bot.head)):
        r = bot.client.post(
            "/api/runs", json=bundle(tmp_path / f"{name}-{sha[:6]}", sha, **(kw if name == "head" else {}))
        )
        assert r.status_code == 201, r.text


def test_full_flow_pending_then_approve_with_one_comment_edited_in_place(bot, tmp_path):
    assert bot.open_pr().status_code == 202
    pending = bot.wait_status("pending")
    assert pending["context"] == "fusegate"
    assert pending["description"].startswith("waiting for 1 of 1 required machines: runner-1")
    assert pending["target_url"] == f"http://gate.test/pr/{bot.base}/{bot.head}"
    wait_for(lambda: bot.comments(), "the first comment")
    _upload(bot, tmp_path)
    success = bot.wait_status("success")
    assert success["description"].startswith("approve: all")
    # the verdict's word beside the required status: waiting, then approve
    bot.wait_status("success", context=report.VERDICT_CONTEXT)  # posted just after the required one
    words = [
        (s["state"], s["description"].split(":")[0]) for s in bot.statuses(context=report.VERDICT_CONTEXT)
    ]
    assert words == [("pending", "waiting for 1 of 1 required machines"), ("success", "approve")]
    wait_for(lambda: "approve" in bot.comments()[0]["body"], "the comment's verdict")
    [comment] = bot.comments()
    assert comment["body"].startswith(report.MARKER)
    assert "| runner-1 | impl_vs_baseline |" in comment["body"] and "**pass**" in comment["body"]
    assert len(bot.github.calls_to("/issues/7/comments", "POST")) == 1
    assert bot.github.calls_to("/issues/comments/", "PATCH")
    check = wait_for(
        lambda: next(
            (c for c in bot.client.get(f"/api/pulls/{REPO}/7").json()["checks"] if c["settled_at"]), None
        ),
        "the check stored as settled",
    )
    assert check["state"] == "success" and check["evaluation_id"] is not None

    # A push to the PR: a new head, pending again, and the same comment edited.
    new_head = gitrepo.commit(bot.path, message="push")
    assert bot.open_pr(head=new_head, action="synchronize").status_code == 202
    assert bot.wait_status("pending", sha=new_head)["description"].startswith("waiting for 1 of 1")
    wait_for(lambda: new_head[:12] in bot.comments()[0]["body"], "the comment for the new head")
    assert len(bot.comments()) == 1 and len(bot.github.calls_to("/issues/7/comments", "POST")) == 1
    assert [s["state"] for s in bot.statuses()] == [
        "pending",
        "success",
    ]  # the old head's status is left alone


def test_a_regression_fails_the_status(bot, tmp_path):
    bot.open_pr()
    bot.wait_status("pending")
    _upload(bot, tmp_path, paired_effect=lambda c: 1.4 if c["impl"] == "assembled" else 1.0)
    failure = bot.wait_status("failure")
    assert failure["description"].startswith("reject:")
    word = bot.wait_status("failure", context=report.VERDICT_CONTEXT)
    assert word["description"] == failure["description"]
    wait_for(lambda: "**fail**" in bot.comments()[0]["body"], "the failing cells in the comment")


def test_inconclusive_stays_pending_and_asks_the_runner_for_more_rounds(bot, tmp_path, monkeypatch):
    bot.open_pr()
    bot.wait_status("pending")
    _upload(bot, tmp_path, paired_effect=lambda c: 1.03 if c["impl"] == "assembled" else 1.0)
    status = wait_for(
        lambda: next((s for s in bot.statuses() if s["description"].startswith("inconclusive")), None),
        "an inconclusive status",
    )
    assert status["state"] == "pending" and "need more rounds" in status["description"]
    word = bot.wait_status("pending", context=report.VERDICT_CONTEXT)
    wait_for(
        lambda: bot.statuses(context=report.VERDICT_CONTEXT)[-1]["description"] == status["description"],
        "the word",
    )
    assert word["state"] == "pending"  # inconclusive is never red beside the required status
    body = wait_for(
        lambda: next((c["body"] for c in bot.comments() if "undecided cells need more" in c["body"]), None),
        "the undecided cells in the comment",
    )
    assert "up to the policy's 8 (`max_rounds`)" in body and re.search(r": [1-7] of 8 processes", body)
    assert "runner-1 impl_vs_baseline g1_" in body and f"fusegate rounds --base {bot.base[:12]}" in body
    answer = bot.client.get(f"/api/rounds/{bot.base}/{bot.head}", params={"machine": "runner-1"}).json()
    assert answer["more"] is True and answer["budget"] == 8 and answer["cells"]
    assert all(c["decision"] == "inconclusive" and c["groups"] < 8 for c in answer["cells"])
    monkeypatch.setenv("FUSEGATE_URL", bot.url)
    args = ["rounds", "--base", bot.base, "--head", bot.head]
    assert cli.main([*args, "--machine", "runner-1"]) == 0
    assert cli.main([*args, "--machine", "runner-9"]) == 1


def test_github_502_then_200_posts_the_status_once(bot):
    bot.github.fail("/statuses/", 502, times=2)
    bot.open_pr()
    bot.wait_status("pending")
    codes = lambda: [c.status for c in bot.github.calls_to("/statuses/", "POST")]  # noqa: E731
    # the required status after two 502s, then the verdict's word beside it
    wait_for(lambda: codes() == [502, 502, 201, 201], f"502, 502, 201, 201; got {codes()}")
    assert len(bot.statuses()) == 1 and len(bot.statuses(context=report.VERDICT_CONTEXT)) == 1


@pytest.mark.slow
def test_rate_limits_are_waited_out(bot):
    reset = int(time.time()) + 2
    bot.github.fail("/statuses/", 403, {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(reset)})
    bot.github.fail("/issues/7/comments", 429, {"retry-after": "1"})
    bot.open_pr()
    bot.wait_status("pending")
    required = lambda: [  # noqa: E731 (the fusegate/verdict status follows, not rate limited)
        c
        for c in bot.github.calls_to("/statuses/", "POST")
        if (c.body or {}).get("context") == report.CONTEXT
    ]
    wait_for(lambda: [c.status for c in required()][:2] == [403, 201], "403 then 201")
    ok = required()[1]
    assert ok.at >= reset  # waited for the reset, not hammered
    wait_for(lambda: bot.comments(), "the comment after the 429")
    listed = bot.github.calls_to("/issues/7/comments", "GET")
    assert [c.status for c in listed] == [429, 200] and listed[1].at - listed[0].at >= 0.9


def test_the_comment_is_found_by_its_marker(bot):
    key = f"{REPO}#7"
    human = {"login": "octocat"}
    quoted = f"why does the bot write {report.MARKER}?"
    bot.github.comments[key] = [
        {"id": 1, "body": "looks good to me", "user": human},
        {"id": 2, "body": quoted, "user": human},
        {"id": 3, "body": f"{report.MARKER}\nan old verdict", "user": {"login": bot.github.login}},
    ]
    bot.github.per_page_max = 2  # the bot's comment is on the second page
    bot.open_pr()
    wait_for(lambda: "an old verdict" not in bot.github.comments[key][2]["body"], "the bot's comment edited")
    assert [c["id"] for c in bot.github.comments[key]] == [1, 2, 3]
    assert [c["body"] for c in bot.github.comments[key][:2]] == ["looks good to me", quoted]
    assert not bot.github.calls_to("/issues/7/comments", "POST")


@pytest.mark.slow
def test_a_pr_that_edits_the_policy_is_judged_by_the_base_policy(store_url, github, tmp_path):
    path = tmp_path / "repo"
    base = gitrepo.commit(path, policy='required_machines = ["runner-1", "runner-2"]\n', message="base")
    head = gitrepo.commit(path, policy='required_machines = ["runner-1"]\n', message="relax the gate")
    app = start_bot(store_url, (path, base, head), github, bot_window_s=4.0)
    with (
        serving(app) as url,
        httpx.Client(base_url=url, timeout=60, headers={"Authorization": f"Bearer {TOKEN}"}) as client,
    ):
        b = Bot(url, store_url, github, (path, base, head), client)
        b.open_pr()
        _upload(b, tmp_path)
        waiting = b.wait_status("pending")
        assert "runner-2" in waiting["description"]
        wait_for(lambda: b.comments(), "the comment")
        assert "edits `fusegate-policy.toml`" in b.comments()[0]["body"]
        assert f"policy: fusegate-policy.toml at base {base[:12]}" in b.comments()[0]["body"]
        error = b.wait_status("error", timeout=30)
        assert error["description"] == "no results from runner-2 within 4 s"
        assert all(s["state"] != "success" for s in b.statuses())


def test_github_app_auth(store_url, github, repo, tmp_path):
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = tmp_path / "app.pem"
    pem.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    github.app_id = "4242"
    github.app_public_key = (
        key.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )
    app = start_bot(
        store_url, repo, github, github_token=None, github_app_id="4242", github_app_private_key_file=pem
    )
    with serving(app) as url, httpx.Client(base_url=url, timeout=60) as client:
        b = Bot(url, store_url, github, repo, client)
        event = bench.pull_request_event(number=7, base=b.base, head=b.head, repo=REPO)
        event["installation"] = {"id": 99}
        assert b.deliver("pull_request", event).status_code == 202
        b.wait_status("pending")
        wait_for(lambda: b.comments(), "the comment")
    [exchange] = github.calls_to("/app/installations/", "POST")
    assert exchange.path == "/api/v3/app/installations/99/access_tokens" and exchange.status == 201
    assert {c.authorization for c in github.calls if c.path.startswith("/api/v3/repos/")} == {
        f"token {github.token}"
    }


def test_an_older_event_does_not_move_the_head_back(bot):
    newer = bench.pull_request_event(number=7, base=bot.base, head=bot.head, repo=REPO)
    newer["pull_request"]["updated_at"] = "2026-11-30T12:00:05Z"
    assert bot.deliver("pull_request", newer).json()["status"] == "queued"
    older = bench.pull_request_event(number=7, base=bot.base, head=bot.base, repo=REPO)
    older["pull_request"]["updated_at"] = "2026-11-30T12:00:00Z"
    r = bot.deliver("pull_request", older)
    assert r.status_code == 202 and r.json()["status"] == "ignored"
    assert bot.client.get(f"/api/pulls/{REPO}/7").json()["head_sha"] == bot.head


def test_reopening_restarts_a_check_that_errored(store_url, github, repo, tmp_path):
    app = start_bot(store_url, repo, github, bot_window_s=1.0)
    with serving(app) as url, httpx.Client(base_url=url, timeout=60) as client:
        b = Bot(url, store_url, github, repo, client)
        b.open_pr()
        b.wait_status("error")  # nothing reported within 1 s
        b.open_pr(action="reopened")
        wait_for(lambda: b.statuses()[-1]["state"] == "pending", "pending again after the reopen")


def test_a_head_the_service_cannot_fetch_is_retried_not_failed(bot):
    unknown = "f" * 40
    assert bot.open_pr(head=unknown).status_code == 202
    error = wait_for(lambda: _job_error(bot.store), "the job to record the missing commit")
    assert "MissingCommit" in error and unknown[:12] in error
    assert bot.statuses(unknown) == []  # no status until the deadline: the commit may still be pushed


def _job_error(url) -> str:
    from sqlalchemy import select

    from gate.store import db
    from gate.store.models import BotJob

    with db.transaction(url, write=False) as session:
        return session.scalar(select(BotJob.error).where(BotJob.error != ""))


def test_a_pr_behind_main_is_judged_merged_into_it_and_its_status_goes_on_its_head(bot, tmp_path):
    from gate import pair

    gitrepo.git(bot.path, "checkout", "-q", "-b", "behind", bot.base)
    pr = gitrepo.commit(bot.path, message="a pull request branched from the base")
    gitrepo.git(bot.path, "checkout", "-q", "main")
    tip = gitrepo.commit(bot.path, message="main moves on")
    merged = pair.judged(bot.path, tip, pr).head
    assert bot.open_pr(base=tip, head=pr).status_code == 202
    pending = bot.wait_status("pending", sha=pr)
    assert pending["target_url"] == f"http://gate.test/pr/{tip}/{merged}"
    for name, sha in (("base", tip), ("head", merged)):  # the runner measures the merge, not the PR's head
        r = bot.client.post("/api/runs", json=bundle(tmp_path / name, sha))
        assert r.status_code == 201, r.text
    assert bot.wait_status("success", sha=pr)["description"].startswith("approve: all")
    body = wait_for(
        lambda: next((c["body"] for c in bot.comments() if "approve" in c["body"]), None), "a verdict"
    )
    assert f"judged merged into the base as `{merged[:12]}`" in body


def test_a_runner_learns_that_the_service_has_the_base_and_measures_the_head_only(bot, tmp_path):
    from gate.runner import upload

    assert not upload.stored(url=bot.url, commit=bot.base, machine="runner-1")
    r = bot.client.post("/api/runs", json=bundle(tmp_path / "base", bot.base))
    assert r.status_code == 201, r.text
    assert upload.stored(url=bot.url, commit=bot.base, machine="runner-1")
    assert not upload.stored(url=bot.url, commit=bot.base, machine="runner-9")  # times are per machine
    assert not upload.stored(url=bot.url, commit=bot.head, machine="runner-1")
    with pytest.raises(upload.UploadError, match="GET /api/runs"):
        upload.stored(url="http://127.0.0.1:9", commit=bot.base, machine="runner-1")
