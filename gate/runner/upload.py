"""The runner's side of the service: ``fusegate upload`` and ``fusegate rounds``.

An upload first writes every bundle to a spool directory (one file per bundle, named by its content hash, written
atomically), then sends the spooled files oldest first and deletes each only when the service acknowledges it
(201). Connection errors, 5xx and 429 are retried with exponential backoff for ``retry_for`` seconds; what is
still unsent stays in the spool for the next ``fusegate upload``. The service stores identical content once, so a
bundle whose acknowledgement was lost and is sent again arrives exactly once. A bundle the service refuses as
invalid (4xx) is moved to ``rejected/`` beside the reason, never deleted.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import httpx

from gate import backoff as retry

RETRYABLE = (429, 500, 502, 503, 504)


class UploadError(RuntimeError):
    pass


@dataclass(frozen=True)
class Sent:
    file: str
    outcome: str  # stored | unchanged | rejected
    detail: str


def spool(bundles: Iterable, directory: Path) -> list[Path]:
    """Write each bundle (``gate.ingest.bundle.Bundle``) to ``directory``; the same content is written once."""
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for b in bundles:
        text = json.dumps(b.model_dump(), sort_keys=True)
        path = directory / f"{hashlib.sha256(text.encode()).hexdigest()[:32]}.json"
        if not path.exists():
            tmp = path.with_suffix(".tmp")
            tmp.write_text(text)
            os.replace(tmp, path)
        paths.append(path)
    return paths


def deliver(
    directory: Path,
    *,
    url: str,
    token: str,
    retry_for: float = 600.0,
    backoff: float = 1.0,
    max_backoff: float = 30.0,
    sleep: Callable[[float], None] = time.sleep,
) -> list[Sent]:
    """Send every spooled bundle; raises ``UploadError`` (files kept) when the service stays unreachable."""
    files = sorted(directory.glob("*.json"), key=lambda p: (p.stat().st_mtime, p.name))
    give_up = time.monotonic() + retry_for
    sent: list[Sent] = []
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    with httpx.Client(base_url=url.rstrip("/"), timeout=120, headers=headers) as client:
        for path in files:
            attempt = 0
            while True:
                try:
                    r = client.post("/api/runs", content=path.read_bytes())
                except httpx.TransportError as exc:
                    problem = f"{type(exc).__name__}: {exc}"
                else:
                    if r.status_code in (200, 201):
                        body = r.json()
                        outcome = "stored" if body.get("stored") else "unchanged"
                        path.unlink()
                        sent.append(Sent(path.name, outcome, f"{body.get('results', 0)} results"))
                        break
                    if r.status_code in (401, 403):
                        raise UploadError(
                            f"the service refused the token ({r.status_code}: {_detail(r)}); set FUSEGATE_TOKEN "
                            f"to a token from `fusegate token create`; {len(files) - len(sent)} bundle(s) kept in "
                            f"{directory}"
                        )
                    if r.status_code not in RETRYABLE:
                        rejected = directory / "rejected"
                        rejected.mkdir(exist_ok=True)
                        os.replace(path, rejected / path.name)
                        (rejected / f"{path.stem}.error.txt").write_text(f"{r.status_code}: {_detail(r)}\n")
                        sent.append(Sent(path.name, "rejected", f"{r.status_code}: {_detail(r)}"))
                        break
                    problem = f"{r.status_code}: {_detail(r)}"
                left = give_up - time.monotonic()
                if left <= 0:
                    raise UploadError(
                        f"{url} did not take the results ({problem}); {len(files) - len(sent)} bundle(s) kept in "
                        f"{directory}: run `fusegate upload` again"
                    )
                sleep(min(retry.delay(attempt, base=backoff, cap=max_backoff), left))
                attempt += 1
    return sent


def _detail(r: httpx.Response) -> str:
    try:
        return str(r.json().get("detail", r.text))[:500]
    except (json.JSONDecodeError, AttributeError):
        return r.text[:500]


def more_rounds(
    *,
    url: str,
    base: str,
    head: str,
    machine: str,
    wait: float = 120.0,
    sleep: Callable[[float], None] = time.sleep,
) -> dict:
    """The service's answer to "should ``machine`` run more rounds of (base, head)?" (``GET /api/rounds``),
    waiting up to ``wait`` seconds for the evaluation of the latest upload to be stored."""
    give_up = time.monotonic() + wait
    while True:
        r = httpx.get(f"{url.rstrip('/')}/api/rounds/{base}/{head}", params={"machine": machine}, timeout=60)
        if r.status_code == 200 and not r.json()["stale"]:
            return r.json()
        if r.status_code not in (200, 404) or time.monotonic() > give_up:
            raise UploadError(f"GET /api/rounds/{base}/{head}: {r.status_code}: {_detail(r)}")
        sleep(2.0)


def stored(*, url: str, commit: str, machine: str) -> bool:
    """Whether the service has runs of ``commit`` on ``machine`` (``GET /api/runs``): a commit of the base
    branch measured when it was pushed need not be measured again for every pull request."""
    try:
        r = httpx.get(
            f"{url.rstrip('/')}/api/runs",
            params={"commit": commit, "machine": machine, "limit": 1},
            timeout=60,
        )
    except httpx.TransportError as exc:
        raise UploadError(f"GET /api/runs: {type(exc).__name__}: {exc}") from None
    if r.status_code != 200:
        raise UploadError(
            f"GET /api/runs?commit={commit[:12]}&machine={machine}: {r.status_code}: {_detail(r)}"
        )
    return bool(r.json())
