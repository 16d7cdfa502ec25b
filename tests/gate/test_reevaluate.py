"""Results arriving together share re-evaluations: each caller gets a verdict from a run that started after it
asked, and concurrent callers of one pair do not each run their own."""

from __future__ import annotations

import itertools
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from gate.services import verdicts
from tests.gate.builders import measure_results


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
    assert verdicts._FLIGHTS == {}  # nothing kept once the arrivals are answered


def test_a_run_committed_after_the_judging_read_leaves_the_verdict_stale(store_url, tmp_path, monkeypatch):
    """The race review found: a run stamped before the evaluation started but committed after its read."""
    from datetime import timedelta

    from gate import evaluate as evaluation
    from gate.ingest import asv_dir
    from gate.ingest import bundle as bundles
    from gate.services import results
    from gate.store import db, queries
    from gate.store.models import Run
    from tests.gate import gitrepo

    repo, base, head = gitrepo.base_and_head(tmp_path / "repo", policy='compare = ["assembled"]\n')
    for sha, name in ((base, "a"), (head, "b")):
        [b] = asv_dir.read(measure_results(tmp_path / name, sha))
        results.arrived(store_url, repo=repo, runs=bundles.runs(b))
    [late] = asv_dir.read(measure_results(tmp_path / "late", head, machine="runner-2", seed=3))
    real = evaluation.judge

    def judge_while_a_run_lands(session, **kw):
        outcome = real(session, **kw)  # read: runner-2 is not there yet
        with db.transaction(store_url) as other:  # lands now, stamped before the evaluation started
            queries.ingest_runs(other, runs=bundles.runs(late))
            run = other.query(Run).order_by(Run.id.desc()).first()
            run.uploaded_at = run.uploaded_at - timedelta(minutes=1)
        return outcome

    monkeypatch.setattr(verdicts, "judge", judge_while_a_run_lands)
    made = verdicts.evaluate(store_url, repo=repo, base_sha=base, head_sha=head)
    assert {c.machine for c in made.comparisons} == {"runner-1"}  # it did not see runner-2
    with db.transaction(store_url, write=False) as session:
        _, _, latest = verdicts.latest(session, repo=repo, base=base, head=head)
    assert latest.stale  # so the bot and readers evaluate again, instead of serving it as fresh
