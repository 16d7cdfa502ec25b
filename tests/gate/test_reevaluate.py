"""Results arriving together share re-evaluations: each caller gets a verdict from a run that started after it
asked, and concurrent callers of one pair do not each run their own."""

from __future__ import annotations

import itertools
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from gate.services import verdicts


def test_concurrent_arrivals_share_runs_and_each_sees_a_run_started_after_it(monkeypatch, tmp_path):
    runs: list[tuple[float, float]] = []  # (start, end) of every evaluation
    lock = threading.Lock()

    def evaluate(url, *, repo, base_sha, head_sha):
        start = time.monotonic()
        time.sleep(0.2)
        with lock:
            runs.append((start, time.monotonic()))
            return len(runs), start  # which run, and when it started

    monkeypatch.setattr(verdicts, "evaluate", evaluate)

    def arrive(i: int):
        time.sleep(0.01 * i)  # twenty arrivals over 0.2 s, while runs are going on
        asked = time.monotonic()
        _, started = verdicts.reevaluate(
            f"sqlite:///{tmp_path}/x.db", repo=tmp_path, base_sha="b", head_sha="h"
        )
        return asked, started

    with ThreadPoolExecutor(20) as pool:
        answers = list(pool.map(arrive, range(20)))
    assert all(started >= asked for asked, started in answers)  # nobody got a verdict older than its results
    assert len(runs) <= 3, runs  # not one per arrival
    assert all(b[0] >= a[1] for a, b in itertools.pairwise(runs))  # one run at a time per pair
