"""``python -m tools dashboard-bench``: server time of every page and JSON endpoint on a big store.

The store is filled in bulk (``tools.store_scale.fill_bulk``: four machines, a long main history, every run a
full-profile grid) and one PR commit is evaluated. Each page is then requested ``repeats`` times, round-robin,
through the real service under uvicorn; the time is the service's own ``Server-Timing`` (from the request
reaching the app to the response), so the client's share of the 2-core machine is not counted.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import httpx
import numpy as np

from gate.api.app import create_app
from gate.api.background import serving
from gate.git import resolve
from gate.services.verdicts import evaluate_and_store
from gate.store import db, queries
from tools import store_scale as scale

CELL = "task=g1_walk&impl=assembled&num_envs=4096&threads=2"


def _server_ms(response: httpx.Response) -> float:
    return float(response.headers["server-timing"].split("dur=")[1])


def pages(
    url: str, *, repo: Path, results: int, repeats: int, progress: Callable[[int], None] = lambda n: None
) -> tuple[list[dict], dict]:
    with db.transaction(url, write=False) as session:
        have = queries.count_results(session)
    if have < results:
        if have:
            raise ValueError(
                f"{url} holds {have} results, fewer than --results {results}; use an empty store"
            )
        scale.fill_bulk(url, results=results, progress=progress)
    commits = scale.fill_commits(url)
    base, head = commits["base"], commits["head"]
    with db.transaction(url) as session:
        if queries.latest_evaluation(session, base_sha=base, head_sha=head) is None:
            evaluate_and_store(
                session, repo=repo, base_sha=base, head_sha=head, policy_sha=resolve(repo, "HEAD")
            )
        total = queries.count_results(session)
    paths = {
        "machines": "/machines",
        "machine matrix": "/machines/fill-0",
        "history": f"/history/fill-0?metric=paired&{CELL}",
        "compare machines": f"/compare?metric=paired&{CELL}",
        "PR verdict": f"/pr/{base}/{head}",
        "thread curve": "/threads/fill-0?task=g1_walk&num_envs=4096",
        "GET /api/dashboard/machines": "/api/dashboard/machines",
        "GET /api/dashboard/matrix": "/api/dashboard/matrix/fill-0",
        "GET /api/dashboard/history": f"/api/dashboard/history/fill-0?metric=paired&{CELL}",
        "GET /api/dashboard/compare": f"/api/dashboard/compare?metric=paired&{CELL}",
        "GET /api/dashboard/threads": "/api/dashboard/threads/fill-0?task=g1_walk&num_envs=4096",
        "GET /api/verdicts": f"/api/verdicts/{base}/{head}",
    }
    times: dict[str, list[float]] = {name: [] for name in paths}
    sizes = {}
    with (
        serving(create_app(database_url=url, repo=repo)) as service,
        httpx.Client(base_url=service, timeout=120) as c,
    ):
        for name, path in paths.items():  # warm-up, and every page must answer
            r = c.get(path)
            r.raise_for_status()
            sizes[name] = len(r.content)
        for _ in range(repeats):
            for name, path in paths.items():
                times[name].append(_server_ms(c.get(path)))
        points = len(c.get(paths["GET /api/dashboard/history"]).json()["points"])
    rows = []
    for name, path in paths.items():
        ms = np.array(times[name])
        rows.append(
            {
                "page": name,
                "path": path.split("?")[0],
                "median_ms": float(np.median(ms)),
                "p95_ms": float(np.percentile(ms, 95)),
                "max_ms": float(ms.max()),
                "bytes": sizes[name],
            }
        )
    return rows, {
        "results_in_store": total,
        "repeats": repeats,
        "history_points": points,
        "base": base,
        "head": head,
    }
