"""``POST /api/github/webhook``: GitHub's pull request events in; the bot's work is queued, never done here.

The body is checked against ``X-Hub-Signature-256`` (HMAC-SHA256 with the webhook secret, constant-time compare)
before it is parsed. ``pull_request`` opened / synchronize / reopened records the pull request, starts a pending
check for its head and queues it for the worker, in one transaction with the delivery id, so a redelivery
(same ``X-GitHub-Delivery``) is answered without doing anything twice. ``issue_comment`` created / edited on a
pull request the bot watches, with a ``/fusegate`` command (``gate.acceptance``), records the command for the
PR's head and queues its check the same way; the worker asks GitHub who may accept, never this handler. ``ping``
is answered; other events and actions are ignored with 202.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
from datetime import UTC, datetime

import pydantic_core
from fastapi import APIRouter, Header, HTTPException, Request, status
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field
from sqlalchemy.exc import IntegrityError

from gate import acceptance
from gate.api.schemas import Problem
from gate.bot.report import MARKER
from gate.store import db, pulls

router = APIRouter(tags=["github"])
ACTIONS = ("opened", "synchronize", "reopened")
COMMENT_ACTIONS = ("created", "edited")
MAX_BODY = 65536  # GitHub's limit of a comment's body


class WebhookOut(BaseModel):
    status: str = Field(description="queued | duplicate | ignored | pong")
    detail: str
    check_id: int | None = None


def signature(secret: str, body: bytes) -> str:
    """GitHub's ``X-Hub-Signature-256`` of a body: ``sha256=`` and the hex HMAC-SHA256 under the webhook secret."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def verify(secret: str, body: bytes, header: str | None) -> bool:
    if not header:
        return False
    return hmac.compare_digest(signature(secret, body).encode(), header.encode("utf-8", "replace"))


def _event_time(payload: dict) -> datetime | None:
    stamp = (payload.get("pull_request") or {}).get("updated_at")
    if not isinstance(stamp, str):
        return None
    try:
        moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        raise HTTPException(
            status.HTTP_400_BAD_REQUEST, f"pull_request payload: updated_at is not a time: {stamp!r}"
        ) from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _text(title: str, limit: int = 1000) -> str:
    """Free text as the store can keep it: no NUL, no unpaired surrogate, at most ``limit`` characters."""
    return title.replace("\x00", "").encode("utf-8", "replace").decode("utf-8")[:limit]


def _field(payload: dict, path: str, kind: type, event: str = "pull_request"):
    value = payload
    for key in path.split("."):
        value = value.get(key) if isinstance(value, dict) else None
    if not isinstance(value, kind) or isinstance(value, bool):
        raise HTTPException(
            status.HTTP_400_BAD_REQUEST,
            f"{event} payload: {path} must be {kind.__name__}, got {str(value)[:100]!r}",
        )
    return value


def _record(url: str, *, delivery: str, event: str, payload: dict, deadline) -> WebhookOut:
    action = str(payload.get("action", ""))
    pr = {
        "repo": _field(payload, "repository.full_name", str),
        "number": _field(payload, "pull_request.number", int),  # checked in range below
        "title": _text(str((payload.get("pull_request") or {}).get("title") or "")),
        "base_ref": _field(payload, "pull_request.base.ref", str),
        "base_sha": _field(payload, "pull_request.base.sha", str),
        "head_sha": _field(payload, "pull_request.head.sha", str),
    }
    if not 1 <= pr["number"] <= 2**31 - 1:
        raise HTTPException(status.HTTP_400_BAD_REQUEST, f"pull_request.number out of range: {pr['number']}")
    for key in ("repo", "base_ref", "base_sha", "head_sha"):
        if not 0 < len(pr[key]) <= 200 or not pr[key].isprintable():
            raise HTTPException(
                status.HTTP_400_BAD_REQUEST, f"pull_request payload: {key} is not a name or SHA"
            )
    installation = (payload.get("installation") or {}).get("id")
    pr["installation_id"] = installation if isinstance(installation, int) else None
    pr["event_at"] = _event_time(payload)
    try:
        return _store(url, pr, delivery=delivery, event=event, action=action, deadline=deadline)
    except IntegrityError:  # a concurrent delivery of the same event or pull request: the second look decides
        return _store(url, pr, delivery=delivery, event=event, action=action, deadline=deadline)


def _store(url: str, pr: dict, *, delivery: str, event: str, action: str, deadline) -> WebhookOut:
    where = f"{pr['repo']}#{pr['number']}"
    with db.transaction(url) as session:
        if pulls.seen_delivery(session, delivery=delivery):
            return WebhookOut(status="duplicate", detail=f"delivery {delivery} was handled already")
        pulls.record_delivery(session, delivery=delivery, event=event, action=action)
        pull = pulls.upsert_pull(session, **pr)
        if pull is None:
            return WebhookOut(status="ignored", detail=f"older than an event of {where} already handled")
        check = pulls.ensure_check(session, pull=pull, deadline=deadline, restart=action == "reopened")
        pulls.enqueue(session, check_ids=[check.id], reason="webhook")
        return WebhookOut(status="queued", detail=f"{where} head {pr['head_sha'][:12]}", check_id=check.id)


def _record_comment(url: str, *, delivery: str, payload: dict, deadline) -> WebhookOut:
    """A ``/fusegate`` command on a pull request the bot watches: recorded for its head, its check queued."""
    event = "issue_comment"
    repo = _field(payload, "repository.full_name", str, event)
    number = _field(payload, "issue.number", int, event)
    comment_id = _field(payload, "comment.id", int, event)
    login = _field(payload, "comment.user.login", str, event)
    body = _field(payload, "comment.body", str, event)
    stamp = payload["comment"].get("updated_at") or payload["comment"].get("created_at")
    if not 1 <= number <= 2**31 - 1 or not 1 <= comment_id <= 2**63 - 1:
        raise HTTPException(
            status.HTTP_400_BAD_REQUEST, "issue_comment payload: issue.number or comment.id out of range"
        )
    if not 0 < len(repo) <= 200 or not 0 < len(login) <= 100 or not (repo + login).isprintable():
        raise HTTPException(
            status.HTTP_400_BAD_REQUEST, "issue_comment payload: repository or user is not a name"
        )
    try:
        at = datetime.fromisoformat(str(stamp).replace("Z", "+00:00")) if stamp else datetime.now(UTC)
    except ValueError:
        raise HTTPException(
            status.HTTP_400_BAD_REQUEST, f"issue_comment payload: comment.updated_at is not a time: {stamp!r}"
        ) from None
    where = f"{repo}#{number}"
    try:
        with db.transaction(url) as session:
            if pulls.seen_delivery(session, delivery=delivery):
                return WebhookOut(status="duplicate", detail=f"delivery {delivery} was handled already")
            pulls.record_delivery(session, delivery=delivery, event=event, action=str(payload.get("action")))
            pull = pulls.pull(session, repo=repo, number=number)
            if pull is None:
                return WebhookOut(
                    status="ignored",
                    detail=f"{where} is not a pull request the bot watches: it answers commands once a "
                    "pull_request event delivered it",
                )
            pulls.record_command(
                session,
                pull=pull,
                comment_id=comment_id,
                login=login,
                body=_text(body, MAX_BODY),
                url=_text(str(payload["comment"].get("html_url") or "")),
                action=str(payload.get("action")),
                commented_at=at if at.tzinfo else at.replace(tzinfo=UTC),
            )
            check = pulls.ensure_check(session, pull=pull, deadline=deadline)
            pulls.enqueue(session, check_ids=[check.id], reason="comment")
            return WebhookOut(
                status="queued",
                detail=f"{where} command by {login} for head {pull.head_sha[:12]}",
                check_id=check.id,
            )
    except IntegrityError:  # a concurrent delivery of the same event
        return WebhookOut(status="duplicate", detail=f"delivery {delivery} was handled already")


def _a_command(payload: dict) -> str | None:
    """Why an ``issue_comment`` event is not for the bot, or None when it carries a command to answer."""
    if payload.get("action") not in COMMENT_ACTIONS:
        return f"issue_comment {payload.get('action', '')} is not handled"
    issue, comment = payload.get("issue"), payload.get("comment")
    if not isinstance(issue, dict) or not issue.get("pull_request"):
        return "a comment on an issue, not on a pull request"
    body = comment.get("body") if isinstance(comment, dict) else None
    if not isinstance(body, str) or MARKER in body or not acceptance.commands(body[:MAX_BODY]):
        return f"no {acceptance.PREFIX} command in the comment"
    return None


@router.post(
    "/api/github/webhook",
    status_code=status.HTTP_202_ACCEPTED,
    responses={
        200: {"model": WebhookOut},
        400: {"model": Problem},
        401: {"model": Problem},
        503: {"model": Problem},
    },
)
async def webhook(
    request: Request,
    x_github_event: str | None = Header(
        default=None, description="pull_request | issue_comment | ping | ..."
    ),
    x_github_delivery: str | None = Header(
        default=None, description="the delivery's GUID; a redelivery repeats it"
    ),
    x_hub_signature_256: str | None = Header(default=None, description="sha256=HMAC of the body"),
) -> WebhookOut:
    """A GitHub webhook delivery: verified, recorded once, and queued for the bot's worker."""
    bot = request.app.state.bot
    if bot is None:
        raise HTTPException(
            status.HTTP_503_SERVICE_UNAVAILABLE,
            "the PR bot is not configured: set FUSEGATE_GITHUB_WEBHOOK_SECRET and FUSEGATE_GITHUB_TOKEN "
            "(or the GitHub App settings) on the service",
        )
    body = await request.body()
    if not verify(request.app.state.webhook_secret, body, x_hub_signature_256):
        raise HTTPException(
            status.HTTP_401_UNAUTHORIZED, "missing or wrong X-Hub-Signature-256 for this body"
        )
    if not x_github_event:
        raise HTTPException(status.HTTP_400_BAD_REQUEST, "missing X-GitHub-Event header")
    if not x_github_delivery or len(x_github_delivery) > 100:
        raise HTTPException(status.HTTP_400_BAD_REQUEST, f"bad X-GitHub-Delivery {x_github_delivery!r}")
    try:  # pydantic-core's parser bounds the nesting (json.loads raises RecursionError past Python's limit)
        payload = pydantic_core.from_json(body)
    except ValueError as exc:
        raise HTTPException(status.HTTP_400_BAD_REQUEST, f"body is not JSON: {exc}") from None
    if not isinstance(payload, dict):
        raise HTTPException(
            status.HTTP_400_BAD_REQUEST, f"body must be a JSON object, got {type(payload).__name__}"
        )
    if x_github_event == "ping":
        return JSONResponse({"status": "pong", "detail": str(payload.get("zen", "")), "check_id": None})
    if x_github_event == "issue_comment":
        why = _a_command(payload)
        if why is not None:
            return WebhookOut(status="ignored", detail=why)
        record = functools.partial(_record_comment, payload=payload)
    elif x_github_event != "pull_request" or payload.get("action") not in ACTIONS:
        return WebhookOut(
            status="ignored", detail=f"{x_github_event} {payload.get('action', '')} is not handled".strip()
        )
    else:
        record = functools.partial(_record, event=x_github_event, payload=payload)
    out = await run_in_threadpool(
        record, request.app.state.database_url, delivery=x_github_delivery, deadline=bot.deadline()
    )
    if out.status == "duplicate":
        return JSONResponse(out.model_dump(), status_code=status.HTTP_200_OK)
    bot.wake()
    return out
