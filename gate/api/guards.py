"""The service's outer layer, a pure ASGI middleware in front of every route and page.

- A request body limit, per route, enforced before anything reads the body: a declared ``Content-Length`` over
  the limit is answered 413 at once, unread; a chunked body is counted as it arrives and cut off at the limit.
  Routes read their bodies only after this layer (and ``POST /api/runs`` only after its token is checked).
- Path and query strings with a control character (``%00`` and friends) are refused with 422 before any route
  or the store sees them: PostgreSQL cannot hold a NUL in text, git cannot take it in an argument.
- An error no route handled is answered 500 (or 503 when the store is unreachable, with ``Retry-After``), in the
  API's problem shape, and the connection stays open: nothing is re-raised to the server.
- Security headers on every response: a content security policy (same-origin scripts only), no framing, no
  MIME sniffing, no referrer; and ``Server-Timing`` (the app's time to its response's start).

A pure ASGI layer, not Starlette's ``BaseHTTPMiddleware``, which runs the app in a task group of its own and
would hand these exceptions up wrapped in exception groups.
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Callable
from urllib.parse import unquote_to_bytes

from sqlalchemy.exc import DisconnectionError, InterfaceError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from starlette.exceptions import HTTPException
from starlette.routing import compile_path
from starlette.types import ASGIApp, Message, Receive, Scope, Send

log = logging.getLogger("fusegate")

CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
    (b"cross-origin-opener-policy", b"same-origin"),
]
STORE_DOWN = (OperationalError, InterfaceError, DisconnectionError, PoolTimeout)
_CONTROL = frozenset(range(0x20)) | {0x7F}


class _TooLarge(HTTPException):
    """Raised from ``receive`` when a body passes its limit: an HTTPException, so whichever layer is reading the
    body (FastAPI's parser or a route) answers 413 through the app's own error handler."""

    def __init__(self, detail: str) -> None:
        super().__init__(413, detail, headers={"Connection": "close"})


def _problem(status: int, detail: str, headers: list[tuple[bytes, bytes]] = ()) -> tuple[dict, bytes]:
    body = json.dumps({"detail": detail}).encode()
    start = {
        "type": "http.response.start",
        "status": status,
        "headers": [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
            *headers,
            *HEADERS,
        ],
    }
    return start, body


def _control_in(scope: Scope) -> str | None:
    """Which part of the request's target holds a control character, or None."""
    raw = scope.get("raw_path") or scope["path"].encode("utf-8", "surrogateescape")
    if any(b in _CONTROL for b in unquote_to_bytes(raw)):
        return "path"
    if any(b in _CONTROL for b in unquote_to_bytes(scope.get("query_string", b"").replace(b"+", b" "))):
        return "query string"
    return None


class Guard:
    """Body limits, target checks, errors as problems and security headers (see the module's docstring).

    ``limit(method, path)`` is the body limit in bytes of a route; ``openapi()`` the app's document, so a 405
    names in ``Allow`` every method its path is served with (Starlette names only the first matching route's).
    """

    def __init__(
        self, app: ASGIApp, *, limit: Callable[[str, str], int], openapi: Callable[[], dict]
    ) -> None:
        self.app, self.limit, self.openapi = app, limit, openapi
        self._paths: list[tuple[re.Pattern, set[str]]] | None = None

    def allowed(self, path: str) -> bytes | None:
        if self._paths is None:
            self._paths = [
                (compile_path(template)[0], {m.upper() for m in operations})
                for template, operations in self.openapi()["paths"].items()
            ]
        methods = set().union(*(m for pattern, m in self._paths if pattern.match(path)))
        return ", ".join(sorted(methods)).encode() if methods else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False
        clock = time.perf_counter()

        async def send_guarded(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                timing = f"app;dur={(time.perf_counter() - clock) * 1e3:.2f}".encode()
                headers = [*message.get("headers", []), *HEADERS, (b"server-timing", timing)]
                if message["status"] == 405 and (allow := self.allowed(scope["path"])):
                    headers = [(k, v) for k, v in headers if k.lower() != b"allow"] + [(b"allow", allow)]
                message = {**message, "headers": headers}
            await send(message)

        async def answer(status: int, detail: str, headers: list[tuple[bytes, bytes]] = ()) -> None:
            start, body = _problem(status, detail, headers)
            await send(start)
            await send({"type": "http.response.body", "body": body})

        where = _control_in(scope)
        if where is not None:
            await answer(422, f"the request's {where} holds a control character (such as %00): remove it")
            return
        limit = self.limit(scope["method"], scope["path"])
        declared = dict(scope.get("headers", [])).get(b"content-length")
        too_large = (
            f"request body over this route's limit of {limit} bytes: send less (the service's limits: "
            "FUSEGATE_MAX_UPLOAD_BYTES for uploads, FUSEGATE_MAX_WEBHOOK_BYTES for the webhook, "
            "FUSEGATE_MAX_BODY_BYTES otherwise)"
        )
        if declared is not None and declared.isdigit() and int(declared) > limit:
            await answer(413, too_large, [(b"connection", b"close")])
            return
        seen = 0

        async def receive_limited() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    raise _TooLarge(too_large)
            return message

        try:
            await self.app(scope, receive_limited, send_guarded)
        except _TooLarge:  # a reader outside the app's handlers
            if not started:
                await answer(413, too_large, [(b"connection", b"close")])
        except STORE_DOWN as exc:
            log.warning("store unavailable on %s %s: %s", scope["method"], scope["path"], exc)
            if not started:
                await answer(
                    503,
                    f"the store is unavailable ({type(exc).__name__}); retry shortly",
                    [(b"retry-after", b"5")],
                )
        except Exception as exc:
            log.exception("unhandled error on %s %s", scope["method"], scope["path"])
            if not started:
                await answer(500, f"internal error: {type(exc).__name__}")
