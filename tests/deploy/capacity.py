"""Capacity of one service process (``python -m tests.deploy.capacity``), a measurement tool, not a test:
uploads per second (``POST /api/runs``, each a machine's asv results of one commit, distinct machines, C at a
time), verdicts computed per second (``POST /api/evaluations``) and verdict reads per second
(``GET /api/verdicts``); or, with ``--uploaders N``, N clients uploading back to back for ``--seconds``, every
answer and the stored count checked. Needs a running service, a token and the base and head commits of its repository:
docs/operations.md has the commands that produced its figures."""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx

from gate.ingest import asv_dir
from tests.gate.builders import measure_results


def _rate(fn, n: int, concurrency: int) -> dict:
    latencies: list[float] = []

    def one(i: int) -> None:
        t = time.perf_counter()
        fn(i)
        latencies.append(time.perf_counter() - t)

    start = time.perf_counter()
    with ThreadPoolExecutor(concurrency) as pool:
        list(pool.map(one, range(n)))
    wall = time.perf_counter() - start
    q = statistics.quantiles(latencies, n=20)
    return {
        "n": n,
        "concurrency": concurrency,
        "per_s": n / wall,
        "median_ms": 1e3 * statistics.median(latencies),
        "p95_ms": 1e3 * q[18],
    }


def _bodies(n: int, base: str, head: str, prefix: str) -> list[str]:
    """n distinct uploads (a machine each, alternately of base and head)."""
    with tempfile.TemporaryDirectory() as tmp:
        bodies = []
        for i in range(n):
            sha = head if i % 2 else base
            [b] = asv_dir.read(
                measure_results(Path(tmp) / str(i), sha, machine=f"{prefix}-{i // 2:04d}", seed=i)
            )
            bodies.append(b.model_dump_json())
    return bodies


def sustained(client: httpx.Client, args) -> dict:
    """``--uploaders`` clients posting distinct uploads back to back for ``--seconds``; then every answer and the
    store's run count are checked: each 201 stored exactly one new run, nothing else was stored."""
    bodies = _bodies(args.uploaders * args.per_uploader, args.base, args.head, "load")
    if args.evaluate_first:  # an official verdict of (base, head): every upload then re-evaluates it
        for body in bodies[:2]:
            assert client.post("/api/runs", content=body).status_code == 201
        bodies = bodies[2:]
        made = client.post("/api/evaluations", json={"base": args.base, "head": args.head})
        assert made.status_code == 201 and made.json().get("official", True), made.text
    before = len(client.get("/api/runs", params={"limit": 1000}).json())
    latencies: list[float] = []
    codes: Counter = Counter()
    stored = 0
    lock = threading.Lock()
    stop = time.monotonic() + args.seconds

    def uploader(u: int) -> None:
        nonlocal stored
        for body in bodies[u :: args.uploaders]:
            if time.monotonic() > stop:
                return
            t = time.perf_counter()
            try:
                r = client.post("/api/runs", content=body)
                code, new = r.status_code, r.status_code == 201 and r.json()["stored"]
            except httpx.HTTPError as exc:
                code, new = type(exc).__name__, 0
            with lock:
                latencies.append(time.perf_counter() - t)
                codes[code] += 1
                stored += new

    start = time.perf_counter()
    threads = [threading.Thread(target=uploader, args=(u,)) for u in range(args.uploaders)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - start
    after = len(client.get("/api/runs", params={"limit": 1000}).json())
    q = statistics.quantiles(latencies, n=20)
    return {
        "uploaders": args.uploaders,
        "seconds": round(wall, 1),
        "uploads": len(latencies),
        "answers": {str(k): v for k, v in codes.items()},
        "errors": len(latencies) - codes[201],
        "runs_stored": after - before,
        "runs_acknowledged": stored,
        "exact": after - before == stored == codes[201],
        "per_s": round(len(latencies) / wall, 2),
        "median_ms": round(1e3 * statistics.median(latencies)),
        "p95_ms": round(1e3 * q[18]),
        "max_ms": round(1e3 * max(latencies)),
        "exhausted": len(latencies) == len(bodies),
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.deploy.capacity", description=__doc__)
    parser.add_argument("--url", required=True)
    parser.add_argument("--token", required=True)
    parser.add_argument("--base", required=True)
    parser.add_argument("--head", required=True)
    parser.add_argument("--uploads", type=int, default=40)
    parser.add_argument("--evaluations", type=int, default=20)
    parser.add_argument("--reads", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--uploaders", type=int, help="instead: this many clients uploading for --seconds")
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--per-uploader", type=int, default=40, help="distinct uploads made ready per client")
    parser.add_argument(
        "--evaluate-first", action="store_true", help="store an official verdict first (needs an admin token)"
    )
    args = parser.parse_args(argv)
    headers = {"Authorization": f"Bearer {args.token}", "Content-Type": "application/json"}
    if args.uploaders:
        with httpx.Client(
            base_url=args.url,
            headers=headers,
            timeout=600,
            limits=httpx.Limits(max_connections=args.uploaders),
        ) as client:
            print(json.dumps({"url": args.url, **sustained(client, args)}, indent=2))
        return 0
    bodies = _bodies(args.uploads, args.base, args.head, "cap")
    client = httpx.Client(base_url=args.url, headers=headers, timeout=600)

    def upload(i: int) -> None:
        assert client.post("/api/runs", content=bodies[i]).status_code == 201

    def evaluate(_: int) -> None:
        r = client.post("/api/evaluations", json={"base": args.base, "head": args.head})
        assert r.status_code == 201, r.text

    def read(_: int) -> None:
        assert client.get(f"/api/verdicts/{args.base}/{args.head}").status_code == 200

    cells = None
    rows = {"uploads": _rate(upload, args.uploads, args.concurrency)}
    rows["verdicts computed"] = _rate(evaluate, args.evaluations, args.concurrency)
    rows["verdict reads"] = _rate(read, args.reads, args.concurrency)
    cells = len(client.get(f"/api/verdicts/{args.base}/{args.head}").json()["comparisons"])
    print(json.dumps({"url": args.url, "cells_per_verdict": cells, **rows}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
