"""Capacity of one service process (``python -m tests.deploy.capacity``), a measurement tool, not a test:
uploads per second (``POST /api/runs``, each a machine's asv results of one commit, distinct machines, C at a
time), verdicts computed per second (``POST /api/evaluations``) and verdict reads per second
(``GET /api/verdicts``). Needs a running service, a token and the base and head commits of its repository:
docs/operations.md has the commands that produced its figures."""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx

from gate.ingest import asv_dir
from tests.gate.test_evaluate import _measure


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
    return {"n": n, "concurrency": concurrency, "per_s": n / wall, "median_ms": 1e3 * statistics.median(latencies),
            "p95_ms": 1e3 * q[18]}  # fmt: skip


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
    args = parser.parse_args(argv)
    headers = {"Authorization": f"Bearer {args.token}", "Content-Type": "application/json"}
    with tempfile.TemporaryDirectory() as tmp:
        bodies = []
        for i in range(args.uploads):
            sha = args.head if i % 2 else args.base
            [b] = asv_dir.read(_measure(Path(tmp) / str(i), sha, machine=f"cap-{i // 2:03d}", seed=i))
            bodies.append(b.model_dump_json())
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
