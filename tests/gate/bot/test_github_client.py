"""The GitHub client against the loopback server: pagination, retries, rate limits, App tokens."""

from __future__ import annotations

import time

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from gate.api.background import free_port
from gate.bot.github import AppAuth, GitHub, GitHubError, RateLimited, Retry, TokenAuth

FAST = Retry(attempts=3, backoff=0.01, max_wait=5)


@pytest.fixture
def client(github):
    gh = GitHub(base_url=github.url, auth=TokenAuth(github.token), retry=FAST)
    yield gh
    gh.close()


def test_comments_are_read_across_pages(github, client):
    github.comments["o/r#1"] = [{"id": i, "body": f"c{i}"} for i in range(7)]
    github.per_page_max = 3
    assert [c["id"] for c in client.issue_comments("o/r", 1)] == list(range(7))
    assert len(github.calls_to("/issues/1/comments", "GET")) == 3


def test_a_users_permission_is_their_role_and_none_for_a_stranger(github, client):
    github.permissions.update(
        {"ada": "admin", "max": "maintain", "wes": "write", "tia": "triage", "rob": "read"}
    )
    got = {login: client.permission("o/r", login) for login in [*github.permissions, "stranger"]}
    assert got == {
        "ada": "admin",
        "max": "maintain",
        "wes": "write",
        "tia": "triage",
        "rob": "read",
        "stranger": "none",
    }
    assert github.calls_to("/repos/o/r/collaborators/wes/permission", "GET")
    github.fail("/collaborators/", 403, body="Resource not accessible by integration")
    with pytest.raises(GitHubError, match="403"):  # the App lacks the permission: said, not taken as "none"
        client.permission("o/r", "wes")


def test_a_custom_role_counts_as_its_base_permission():
    from gate.bot.github import permission_of

    assert permission_of({"permission": "write", "role_name": "release-manager"}) == "write"
    assert permission_of({"permission": "read"}) == "read" and permission_of({}) == "none"


def test_a_refusal_is_not_retried(github, client):
    github.fail("/statuses/", 422)
    with pytest.raises(GitHubError, match="422") as exc:
        client.create_status(
            "o/r", "a" * 40, state="pending", description="d", target_url="http://x", context="c"
        )
    assert exc.value.status == 422 and len(github.calls) == 1


def test_5xx_is_retried_until_the_attempts_run_out(github, client):
    github.fail("/statuses/", 503, times=3)
    with pytest.raises(GitHubError, match="gave up after 3 attempts; last: 503"):
        client.create_status(
            "o/r", "a" * 40, state="success", description="d", target_url="http://x", context="c"
        )
    assert [c.status for c in github.calls] == [503, 503, 503]


def test_a_long_rate_limit_is_handed_back_to_the_queue(github, client):
    github.fail("/statuses/", 429, {"retry-after": "3600"})
    with pytest.raises(RateLimited) as exc:
        client.create_status(
            "o/r", "a" * 40, state="error", description="d", target_url="http://x", context="c"
        )
    assert exc.value.retry_at > time.time() + 3500 and len(github.calls) == 1


def test_an_unreachable_github_is_an_error_after_the_retries():
    gh = GitHub(base_url=f"http://127.0.0.1:{free_port()}", auth=TokenAuth("t"), retry=FAST)
    with pytest.raises(GitHubError, match="ConnectError"):
        gh.create_comment("o/r", 1, "hello")


def test_bad_status_states_are_refused_before_any_call(github, client):
    with pytest.raises(ValueError, match="approve"):
        client.create_status("o/r", "a" * 40, state="approve", description="", target_url="", context="c")
    assert github.calls == []


def test_app_installation_tokens_are_fetched_once_and_reused(github):
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    github.app_id = "77"
    github.app_public_key = (
        key.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    gh = GitHub(base_url=github.url, auth=AppAuth("77", pem, installation_id=5), retry=FAST)
    gh.create_comment("o/r", 1, "one")
    gh.create_comment("o/r", 1, "two")
    assert len(github.calls_to("/app/installations/5/access_tokens")) == 1
    wrong = GitHub(base_url=github.url, auth=AppAuth("78", pem, installation_id=5), retry=FAST)
    with pytest.raises(GitHubError, match="401"):
        wrong.create_comment("o/r", 1, "three")
    assert [c["body"] for c in github.comments["o/r#1"]] == ["one", "two"]


def test_a_new_comment_is_not_posted_twice_after_an_ambiguous_failure(github, client):
    github.fail("/comments", 502)
    with pytest.raises(GitHubError, match="may have been done"):
        client.create_comment("o/r", 1, "once")
    assert len(github.calls) == 1  # the caller looks for it before trying again


def test_a_secondary_rate_limit_without_headers_is_waited_for(github):
    waits = []
    gh = GitHub(
        base_url=github.url,
        auth=TokenAuth(github.token),
        retry=Retry(attempts=3, backoff=0.01),
        sleep=waits.append,
    )
    github.fail("/statuses/", 403, body="Resource not accessible by integration")  # a plain refusal
    with pytest.raises(GitHubError, match="403"):
        gh.create_status(
            "o/r", "a" * 40, state="pending", description="d", target_url="http://x", context="c"
        )
    assert waits == []
    github.fail("/statuses/", 403, body="You have exceeded a secondary rate limit.")
    gh.create_status("o/r", "a" * 40, state="pending", description="d", target_url="http://x", context="c")
    assert waits[0] == 60.0
