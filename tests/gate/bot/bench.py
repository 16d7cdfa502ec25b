"""The PR bot's latency bench (``python -m tests.gate.bot.bench``): how long from "the last required machine's results arrive" to "status posted".

Each repeat runs the real service (uvicorn, a fresh SQLite store, the bot's worker) against the loopback GitHub:
the base commit's results are uploaded, a signed ``pull_request`` webhook opens the PR, and the clock starts when
the head commit's results are sent to ``POST /api/runs``; it stops when the loopback GitHub receives the commit
status that reflects them (the verdict's: success / failure / error, or pending when it is inconclusive). The results are a real asv results directory with two commits of one machine.
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path

import httpx
import numpy as np

from gate.api.background import serving
from gate.api.routes.github import signature
from gate.ingest import asv_dir
from gate.ingest.bundle import Bundle

SECRET = "bench-webhook-secret"
TOKEN = "fg_bench-token"


def split_by_commit(results: Path, *, base: str | None = None, head: str | None = None):
    """(base sha, head sha, base bundle, head bundle) of one machine: the given commits, else its two newest."""
    if base and base == head:
        raise ValueError(f"base and head are the same commit {base[:12]}: a pull request needs two")
    for b in asv_dir.read(results):
        by: dict[str, tuple[int, list]] = {}
        for f in b.results:
            data = f.data()
            by.setdefault(data["commit_hash"], (int(data.get("date") or 0), []))[1].append(f)
        if base and head:
            if base in by and head in by:
                return base, head, _part(b, by[base][1], base), _part(b, by[head][1], head)
        elif len(by) >= 2:
            ordered = sorted(by.items(), key=lambda kv: kv[1][0])
            (base, (_, base_files)), (head, (_, head_files)) = ordered[-2:]
            return base, head, _part(b, base_files, base), _part(b, head_files, head)
    raise ValueError(
        f"{results} has no machine with results of "
        + (f"both {base[:12]} and {head[:12]}" if base and head else "two commits")
        + "; run `asv continuous BASE HEAD` (or `fusegate run` on two commits) first"
    )


def _part(b: Bundle, files: list, sha: str) -> Bundle:
    records = [r for r in b.sidecar if r.get("commit") == sha]
    return b.model_copy(update={"results": files, "sidecar": records})


def sign(body: bytes, secret: str = SECRET) -> str:
    return signature(secret, body)


def pull_request_event(
    *, number: int, base: str, head: str, repo: str = "fusegate/bench", action="opened"
) -> dict:
    return {
        "action": action,
        "number": number,
        "repository": {"full_name": repo},
        "pull_request": {
            "number": number,
            "title": f"bench {number}",
            "base": {"ref": "main", "sha": base},
            "head": {"ref": f"pr-{number}", "sha": head},
        },
    }


def comment_event(
    *, number: int, login: str, body: str, comment_id: int, repo: str = "fusegate/bench", action="created"
) -> dict:
    """GitHub's ``issue_comment`` event of a comment on pull request ``number``."""
    return {
        "action": action,
        "repository": {"full_name": repo},
        "issue": {
            "number": number,
            "pull_request": {"url": f"https://api.github.test/repos/{repo}/pulls/{number}"},
        },
        "comment": {
            "id": comment_id,
            "body": body,
            "user": {"login": login, "type": "User"},
            "html_url": f"https://github.test/{repo}/pull/{number}#issuecomment-{comment_id}",
            "created_at": "2026-12-06T12:00:00Z",
            "updated_at": "2026-12-06T12:00:00Z",
        },
    }


def deliver(
    client: httpx.Client, event: str, payload: dict, *, delivery: str, secret: str = SECRET
) -> httpx.Response:
    body = json.dumps(payload).encode()
    headers = {
        "X-GitHub-Event": event,
        "X-GitHub-Delivery": delivery,
        "X-Hub-Signature-256": sign(body, secret),
        "Content-Type": "application/json",
    }
    return client.post("/api/github/webhook", content=body, headers=headers)


def wait_for(predicate, what: str, timeout: float = 60.0):
    """Poll ``predicate`` until it returns something truthy, and return that."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.005)
    raise TimeoutError(f"timed out after {timeout:.0f} s waiting for {what}")


def _status_since(fake, sha: str, since: float):
    """The first required status (``report.CONTEXT``) posted for ``sha`` at or after ``since``: the bot posts
    ``report.VERDICT_CONTEXT`` right after each one, and that second post of the opening's pending status can
    land after the head's results were sent."""
    from gate.bot import report

    return next(
        (
            c
            for c in fake.calls_to(f"/statuses/{sha}", "POST")
            if c.at >= since and c.status == 201 and c.body.get("context") == report.CONTEXT
        ),
        None,
    )


def _one(service: str, fake, i: int, base: str, head: str, base_bundle: Bundle, head_bundle: Bundle):
    """One PR through the service: (results-to-status seconds, upload seconds, the settled state)."""
    with httpx.Client(base_url=service, timeout=120, headers={"Authorization": f"Bearer {TOKEN}"}) as client:
        client.post("/api/runs", json=base_bundle.model_dump()).raise_for_status()
        event = pull_request_event(number=i + 1, base=base, head=head)
        opened = time.time()
        deliver(client, "pull_request", event, delivery=f"bench-{i}").raise_for_status()
        wait_for(lambda: _status_since(fake, head, opened), "the pending status", 60)
        start = time.time()
        r = client.post("/api/runs", json=head_bundle.model_dump())
        upload = time.time() - start
        r.raise_for_status()

        # the first status after the results is the verdict's (pending when it is inconclusive)
        final = wait_for(lambda: _status_since(fake, head, start), "the status for the head's results", 120)
        return final.at - start, upload, f"{final.body['state']} ({final.body['description'].split(':')[0]})"


def latency(
    *, results: Path, repo: Path, repeats: int, base: str | None = None, head: str | None = None
) -> dict:
    from gate.api.app import create_app
    from gate.settings import Settings
    from gate.store import db, queries
    from tests.gate.bot.loopback import FakeGitHub

    base, head, base_bundle, head_bundle = split_by_commit(results, base=base, head=head)
    samples, uploads, states = [], [], []
    fake = FakeGitHub()
    with serving(fake.app()) as github_url, tempfile.TemporaryDirectory() as tmp:
        settings = Settings(
            github_webhook_secret=SECRET, github_api_url=github_url, github_token=fake.token, bot_poll_s=5.0
        )
        for i in range(repeats):
            url = f"sqlite:///{Path(tmp) / f'store-{i}.db'}"
            db.upgrade(url)
            with db.transaction(url) as session:
                queries.create_token(session, name="bench", secret=TOKEN)
            app = create_app(database_url=url, repo=repo, settings=settings)
            with serving(app) as service:
                took, upload, state = _one(service, fake, i, base, head, base_bundle, head_bundle)
            samples.append(took)
            uploads.append(upload)
            states.append(state)
    s = np.array(samples)
    return {
        "repeats": repeats,
        "base": base,
        "head": head,
        "results": sum(len(b.results) for b in (base_bundle, head_bundle)),
        "latency_median_s": float(np.median(s)),
        "latency_p95_s": float(np.percentile(s, 95)),
        "latency_max_s": float(s.max()),
        "upload_median_s": float(np.median(uploads)),
        "states": sorted(set(states)),
        "samples_s": [round(x, 4) for x in samples],
    }


def _table(row: dict):
    from rich.table import Table

    table = Table(
        title="fusegate bot: last required results arrive -> commit status posted",
        caption=f"base {row['base'][:12]} -> head {row['head'][:12]}, {row['results']} result files; "
        f"statuses: {', '.join(row['states'])}",
    )
    for col in ("repeats", "median", "p95", "max", "upload (POST /api/runs) median"):
        table.add_column(col, justify="right")
    table.add_row(
        str(row["repeats"]),
        f"{row['latency_median_s'] * 1e3:.0f} ms",
        f"{row['latency_p95_s'] * 1e3:.0f} ms",
        f"{row['latency_max_s'] * 1e3:.0f} ms",
        f"{row['upload_median_s'] * 1e3:.0f} ms",
    )
    return table


def main(argv=None) -> int:
    """Time results-arrive -> status-posted through the real service and the loopback GitHub; exit 2 on bad input."""
    import argparse
    import sys

    from rich.console import Console

    from gate import git
    from gate.settings import Settings

    parser = argparse.ArgumentParser(prog="python -m tests.gate.bot.bench", description=main.__doc__)
    parser.add_argument(
        "--results", default=".asv/results", metavar="DIR", help="asv results with two commits of one machine"
    )
    parser.add_argument("--base", help="base commit of the results (default: the older of the two newest)")
    parser.add_argument("--head", help="head commit of the results (default: the newest)")
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    try:
        if bool(args.base) != bool(args.head):
            raise ValueError(
                "give both --base and --head, or neither (the two newest commits of the results)"
            )
        repo = Settings().repo.resolve()
        base, head = (
            (git.resolve(repo, args.base), git.resolve(repo, args.head)) if args.base else (None, None)
        )
        row = latency(results=Path(args.results), repo=repo, repeats=args.repeats, base=base, head=head)
    except ValueError as exc:
        print(f"bench: error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(row, indent=2))
    else:
        Console().print(_table(row))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
