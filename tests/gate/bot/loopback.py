"""A loopback stand-in for the GitHub REST endpoints the bot calls, recording every call.

It serves commit statuses, issue comments (paginated with ``Link`` headers, each with its author), pull requests
(``pulls``, as the test sets them), the token's user (or, for an Actions token, a 403 as GitHub answers it:
``user_forbidden``), users' repository permissions (``permissions``: login -> role; anyone else is not a user,
404), and GitHub App installation tokens (checking the App's RS256 JWT against the public key it is given), under
an optional path prefix (GitHub Enterprise Server's ``/api/v3``), and answers with scripted failures when told
(``fail``: 502s, primary or secondary rate limits). The tests drive the bot against it, and the latency bench
(``python -m tests.gate.bot.bench``) measures the bot's latency with it; it is not GitHub, so it only knows what
the bot uses.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field

import jwt
from fastapi import APIRouter, FastAPI, HTTPException, Request
from fastapi.responses import JSONResponse


@dataclass
class Call:
    method: str
    path: str
    body: dict | None
    authorization: str
    at: float  # time.time() when it arrived
    status: int = 0  # 0 until the answer is sent


@dataclass
class FakeGitHub:
    token: str = "ghs_loopback"
    login: str = "fusegate-bot"  # the token's user; a GitHub App comments as "<app_slug>[bot]"
    app_slug: str = "fusegate"
    prefix: str = ""  # "/api/v3" for GitHub Enterprise Server
    app_public_key: str | None = None  # PEM: App auth accepted with a JWT signed by the matching private key
    app_id: str = ""
    per_page_max: int = 100
    calls: list[Call] = field(default_factory=list)
    statuses: dict[str, list[dict]] = field(default_factory=dict)  # sha -> statuses in order
    comments: dict[str, list[dict]] = field(default_factory=dict)  # "owner/name#number" -> comments
    pulls: dict[str, dict] = field(default_factory=dict)  # "owner/name#number" -> the pull request's JSON
    user_forbidden: bool = (
        False  # GET /user refused, as for an Actions token (it comments as github-actions[bot])
    )
    permissions: dict[str, str] = field(
        default_factory=dict
    )  # login -> admin | maintain | write | triage | read
    _failures: list[tuple[str, int, dict, str]] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _next_id: int = 1000

    def fail(
        self, path_part: str, status: int, headers: dict | None = None, times: int = 1, body: str = "scripted"
    ) -> None:
        """The next ``times`` calls whose path contains ``path_part`` get ``status`` with ``headers`` and a
        ``{"message": body}``."""
        with self._lock:
            self._failures += [(path_part, status, headers or {}, body)] * times

    def calls_to(self, path_part: str, method: str | None = None) -> list[Call]:
        return [c for c in self.calls if path_part in c.path and (method is None or c.method == method)]

    def _scripted(self, path: str) -> tuple[int, dict, str] | None:
        with self._lock:
            for i, (part, status, headers, body) in enumerate(self._failures):
                if part in path:
                    del self._failures[i]
                    return status, headers, body
        return None

    def _new_id(self) -> int:
        with self._lock:
            self._next_id += 1
            return self._next_id

    def _author(self) -> str:
        return f"{self.app_slug}[bot]" if self.app_public_key is not None else self.login

    def app(self) -> FastAPI:
        api = FastAPI(title="loopback GitHub")
        routes = APIRouter(prefix=self.prefix)

        @api.middleware("http")
        async def record(request: Request, call_next):
            body = await request.body()
            call = Call(
                method=request.method,
                path=request.url.path,
                body=json.loads(body) if body else None,
                authorization=request.headers.get("authorization", ""),
                at=time.time(),
            )
            self.calls.append(call)
            scripted = self._scripted(request.url.path)
            if scripted is not None:
                call.status = scripted[0]
                return JSONResponse({"message": scripted[2]}, status_code=scripted[0], headers=scripted[1])
            if not request.url.path.startswith(f"{self.prefix}/app") and call.authorization not in (
                f"Bearer {self.token}",
                f"token {self.token}",
            ):
                call.status = 401
                return JSONResponse({"message": "Bad credentials"}, status_code=401)
            response = await call_next(request)
            call.status = response.status_code
            return response

        def check_app_jwt(request: Request) -> None:
            if self.app_public_key is None:
                raise HTTPException(404, "no App configured")
            token = request.headers.get("authorization", "").removeprefix("Bearer ")
            try:
                claims = jwt.decode(token, self.app_public_key, algorithms=["RS256"])
            except jwt.PyJWTError as exc:
                raise HTTPException(401, f"bad App JWT: {exc}") from None
            if str(claims.get("iss")) != self.app_id:
                raise HTTPException(401, f"JWT iss {claims.get('iss')!r} is not App {self.app_id}")

        @routes.get("/app")
        def app_info(request: Request) -> dict:
            check_app_jwt(request)
            return {"id": int(self.app_id), "slug": self.app_slug}

        @routes.get("/user")
        def user() -> dict:
            if self.user_forbidden:
                raise HTTPException(403, "Resource not accessible by integration")
            return {"login": self.login}

        @routes.get("/repos/{owner}/{name}/pulls/{number}")
        def pull(owner: str, name: str, number: int) -> dict:
            found = self.pulls.get(f"{owner}/{name}#{number}")
            if found is None:
                raise HTTPException(404, "Not Found")
            return found

        @routes.post("/app/installations/{installation}/access_tokens", status_code=201)
        def access_token(installation: int, request: Request) -> dict:
            check_app_jwt(request)
            expires = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 3600))
            return {"token": self.token, "expires_at": expires}

        @routes.post("/repos/{owner}/{name}/statuses/{sha}", status_code=201)
        def create_status(owner: str, name: str, sha: str, body: dict) -> dict:
            self.statuses.setdefault(sha, []).append(body)
            return {"id": self._new_id(), **body}

        @routes.get("/repos/{owner}/{name}/issues/{number}/comments")
        def list_comments(
            owner: str, name: str, number: int, request: Request, per_page: int = 30, page: int = 1
        ):
            items = self.comments.get(f"{owner}/{name}#{number}", [])
            per_page = min(per_page, self.per_page_max)
            chunk = items[(page - 1) * per_page : page * per_page]
            headers = {}
            if page * per_page < len(items):
                nxt = request.url.include_query_params(page=page + 1, per_page=per_page)
                headers["Link"] = f'<{nxt}>; rel="next"'
            return JSONResponse(chunk, headers=headers)

        @routes.post("/repos/{owner}/{name}/issues/{number}/comments", status_code=201)
        def create_comment(owner: str, name: str, number: int, body: dict) -> dict:
            comment = {"id": self._new_id(), "body": body["body"], "user": {"login": self._author()}}
            self.comments.setdefault(f"{owner}/{name}#{number}", []).append(comment)
            return comment

        @routes.get("/repos/{owner}/{name}/collaborators/{login}/permission")
        def permission(owner: str, name: str, login: str) -> dict:
            role = self.permissions.get(login)
            if role is None:
                raise HTTPException(404, "Not Found")
            legacy = {"maintain": "write", "triage": "read"}.get(role, role)  # GitHub's ``permission`` field
            return {"permission": legacy, "role_name": role, "user": {"login": login}}

        @routes.patch("/repos/{owner}/{name}/issues/comments/{comment_id}")
        def update_comment(owner: str, name: str, comment_id: int, body: dict) -> dict:
            for items in self.comments.values():
                for comment in items:
                    if comment["id"] == comment_id:
                        comment["body"] = body["body"]
                        return comment
            raise HTTPException(404, "Not Found")

        api.include_router(routes)
        return api
