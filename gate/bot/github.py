"""A small GitHub REST client (httpx) for what the bot posts: commit statuses and one issue comment per PR, and
what it reads: a pull request's head and base, the bot's login, a PR's comments, a user's permission on the
repository.

- ``base_url`` is configurable, for GitHub Enterprise Server (``https://HOST/api/v3``).
- Auth is a token (``TokenAuth``) or a GitHub App (``AppAuth``: a JWT signed with the App's private key is
  exchanged for an installation token, cached until shortly before it expires).
- Every call is retried with exponential backoff and jitter on transport errors, 5xx and rate limits (429, or
  403 with ``x-ratelimit-remaining: 0``, ``retry-after`` or a "secondary rate limit" message), honouring
  ``retry-after`` and ``x-ratelimit-reset``. A wait longer than ``max_wait`` raises ``RateLimited`` with the time to
  try again, so the caller's queue can reschedule instead of holding a worker. A call that is not idempotent (a
  new comment) is retried only when GitHub cannot have acted on it (connection refused, rate limited): after a
  timeout or a 5xx it raises, and the caller looks before trying again.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from urllib.parse import quote

import httpx
import jwt

from gate import backoff

USER_AGENT = "fusegate-bot"
STATUS_STATES = ("pending", "success", "failure", "error")


class GitHubError(RuntimeError):
    """GitHub refused a call (a 4xx other than a rate limit), or kept failing past the retries."""

    def __init__(self, message: str, *, status: int | None = None):
        super().__init__(message)
        self.status = status


class RateLimited(GitHubError):
    def __init__(self, message: str, *, retry_at: float):
        super().__init__(message, status=403)
        self.retry_at = retry_at  # epoch seconds


class TokenAuth:
    """A personal access token or an Actions token."""

    def __init__(self, token: str):
        self._token = token

    def header(self, client: GitHub, installation_id: int | None) -> str:
        return f"Bearer {self._token}"


class AppAuth:
    """GitHub App: an RS256 JWT (iss = App id) exchanged for per-installation access tokens."""

    def __init__(self, app_id: str, private_key: str, *, installation_id: int | None = None):
        self.app_id, self._key, self.installation_id = app_id, private_key, installation_id
        self._tokens: dict[int, tuple[str, float]] = {}
        self._lock = threading.Lock()

    def app_jwt(self) -> str:
        issued = int(time.time()) - 60  # GitHub allows for clock drift this way
        return jwt.encode(
            {"iat": issued, "exp": issued + 540, "iss": self.app_id}, self._key, algorithm="RS256"
        )

    def header(self, client: GitHub, installation_id: int | None) -> str:
        installation = installation_id or self.installation_id
        if installation is None:
            raise GitHubError(
                "GitHub App auth needs an installation id: the webhook payload carries one, or set "
                "FUSEGATE_GITHUB_APP_INSTALLATION_ID"
            )
        with self._lock:
            token, expires = self._tokens.get(installation, ("", 0.0))
            if time.time() > expires - 120:
                r = client.send(
                    "POST",
                    f"/app/installations/{installation}/access_tokens",
                    authorization=f"Bearer {self.app_jwt()}",
                )
                body = r.json()
                token = body["token"]
                expires = _epoch(body.get("expires_at")) or time.time() + 3600
                self._tokens[installation] = (token, expires)
        return f"token {token}"


def _epoch(stamp: str | None) -> float | None:
    if not stamp:
        return None
    from datetime import datetime

    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


@dataclass(frozen=True, kw_only=True)
class Retry:
    attempts: int = 5
    backoff: float = 0.5  # seconds before the second attempt, doubled each time
    max_backoff: float = 30.0
    max_wait: float = 60.0  # longest rate-limit wait done in place


class GitHub:
    def __init__(
        self,
        *,
        base_url: str,
        auth: TokenAuth | AppAuth,
        retry: Retry = Retry(),
        timeout: float = 10.0,
        sleep: Callable[[float], None] = time.sleep,
        login: str | None = None,
    ):
        """``login``: who the token comments as, when it cannot ask (an Actions token: ``github-actions[bot]``,
        which ``GET /user`` refuses)."""
        self.auth, self.retry, self._sleep = auth, retry, sleep
        self._login: str | None = login
        self._http = httpx.Client(
            base_url=base_url.rstrip("/"),
            timeout=timeout,
            headers={
                "Accept": "application/vnd.github+json",
                "X-GitHub-Api-Version": "2022-11-28",
                "User-Agent": USER_AGENT,
            },
        )

    def close(self) -> None:
        self._http.close()

    def send(
        self,
        method: str,
        path: str,
        *,
        json: dict | None = None,
        params: dict | None = None,
        installation_id: int | None = None,
        authorization: str | None = None,
        idempotent: bool = True,
    ) -> httpx.Response:
        """One call with retries; returns a 2xx response or raises ``GitHubError`` / ``RateLimited``."""
        problem = ""
        for attempt in range(self.retry.attempts):
            if attempt:
                self._sleep(backoff.delay(attempt - 1, base=self.retry.backoff, cap=self.retry.max_backoff))
            auth = authorization or self.auth.header(self, installation_id)
            try:
                r = self._http.request(
                    method, path, json=json, params=params, headers={"Authorization": auth}
                )
            except httpx.TransportError as exc:
                problem = f"{type(exc).__name__}: {exc}"
                if not idempotent and not isinstance(exc, httpx.ConnectError):
                    raise GitHubError(
                        f"{method} {path}: {problem}; it may have been done, look before retrying"
                    ) from None
                continue
            if r.is_success:
                return r
            wait = _rate_limit_wait(r)
            if wait is not None:
                if wait > self.retry.max_wait:
                    raise RateLimited(
                        f"{method} {path}: rate limited for {wait:.0f} s more", retry_at=time.time() + wait
                    )
                self._sleep(wait)
                problem = f"rate limited ({r.status_code})"
                continue
            if r.status_code >= 500:
                problem = f"{r.status_code} {r.reason_phrase}"
                if not idempotent:
                    raise GitHubError(
                        f"{method} {path}: {problem}; it may have been done, look before retrying",
                        status=r.status_code,
                    )
                continue
            raise GitHubError(f"{method} {path}: {r.status_code} {r.text[:300]}", status=r.status_code)
        raise GitHubError(f"{method} {path}: gave up after {self.retry.attempts} attempts; last: {problem}")

    def create_status(
        self,
        repo: str,
        sha: str,
        *,
        state: str,
        description: str,
        target_url: str,
        context: str,
        installation_id: int | None = None,
    ) -> dict:
        if state not in STATUS_STATES:
            raise ValueError(f"commit status state must be one of {STATUS_STATES}, got {state!r}")
        body = {
            "state": state,
            "description": description[:140],
            "target_url": target_url,
            "context": context,
        }
        return self.send(
            "POST", f"/repos/{repo}/statuses/{sha}", json=body, installation_id=installation_id
        ).json()

    def login(self, installation_id: int | None = None) -> str:
        """Who the bot is on GitHub: the token's user, or ``<app slug>[bot]`` for a GitHub App (cached)."""
        if self._login is None:
            if isinstance(self.auth, AppAuth):
                slug = self.send("GET", "/app", authorization=f"Bearer {self.auth.app_jwt()}").json()["slug"]
                self._login = f"{slug}[bot]"
            else:
                self._login = self.send("GET", "/user", installation_id=installation_id).json()["login"]
        return self._login

    def pull(self, repo: str, number: int, *, installation_id: int | None = None) -> dict:
        """A pull request as GitHub has it now (``head.sha``, ``base.sha``, ``base.ref``, ``state``)."""
        return self.send("GET", f"/repos/{repo}/pulls/{number}", installation_id=installation_id).json()

    def issue_comments(self, repo: str, number: int, *, installation_id: int | None = None) -> Iterator[dict]:
        """Every comment of an issue or PR, following the ``Link: rel="next"`` pages."""
        path, params = f"/repos/{repo}/issues/{number}/comments", {"per_page": 100}
        while path:
            r = self.send("GET", path, params=params, installation_id=installation_id)
            yield from r.json()
            path, params = r.links.get("next", {}).get("url", ""), None  # absolute: httpx uses it as is

    def create_comment(
        self, repo: str, number: int, body: str, *, installation_id: int | None = None
    ) -> dict:
        return self.send(
            "POST",
            f"/repos/{repo}/issues/{number}/comments",
            json={"body": body},
            installation_id=installation_id,
            idempotent=False,  # a retried POST after a lost answer would make a second comment
        ).json()

    def permission(self, repo: str, login: str, *, installation_id: int | None = None) -> str:
        """``login``'s permission on ``repo``: admin, maintain, write, triage, read or none (not a user: none)."""
        try:
            r = self.send(
                "GET",
                f"/repos/{repo}/collaborators/{quote(login, safe='')}/permission",
                installation_id=installation_id,
            )
        except GitHubError as exc:
            if exc.status == 404:
                return "none"
            raise
        return permission_of(r.json())

    def update_comment(
        self, repo: str, comment_id: int, body: str, *, installation_id: int | None = None
    ) -> dict:
        return self.send(
            "PATCH",
            f"/repos/{repo}/issues/comments/{comment_id}",
            json={"body": body},
            installation_id=installation_id,
        ).json()


ROLES = ("admin", "maintain", "write", "triage", "read")  # GitHub's repository roles, most first


def permission_of(body: dict) -> str:
    """A user's role from ``GET .../collaborators/{user}/permission``: ``role_name`` when it is one of GitHub's
    roles (``permission`` says maintain as write and triage as read), else ``permission`` (a custom role's base)."""
    role = body.get("role_name")
    return role if role in ROLES else str(body.get("permission") or "none")


def _rate_limit_wait(r: httpx.Response) -> float | None:
    """Seconds to wait when ``r`` is a rate-limit answer (primary or secondary), else None."""
    if r.status_code not in (403, 429):
        return None
    if "retry-after" in r.headers:
        try:
            return max(float(r.headers["retry-after"]), 0.0)
        except ValueError:
            return 60.0
    if r.headers.get("x-ratelimit-remaining") == "0":
        reset = float(r.headers.get("x-ratelimit-reset", time.time() + 60))
        return max(reset - time.time(), 0.0) + 1.0
    if r.status_code == 429 or "rate limit" in r.text.lower():
        return 60.0  # GitHub: wait at least a minute after a secondary rate limit without retry-after
    return None
