"""The gate deciding on two signals: exact cost (callgrind, 1 thread) and wall time, and saying which decided."""

from __future__ import annotations

import numpy as np
import pytest

from gate.domain.benchmarks import COLLECTOR_COST, COST, COST_BENCHMARKS
from gate.stats import InsufficientData, Summary, exact, exact_estimate
from tests.gate import gitrepo
from tests.gate.builders import POLICY, by_decision, costs_of, evaluate_pair, ingest, measure_results


def _walk_hw_4096(c):
    return (c["task"], c["impl"], c["num_envs"]) == ("g1_walk", "handwritten", 4096)


@pytest.fixture
def repo(tmp_path):
    return gitrepo.base_and_head(tmp_path / "repo", policy=POLICY)


def test_exact_summaries_and_their_ratio():
    one = exact([8.3e6])
    assert one.se == 0 and one.low == one.high == one.center and one.groups == 1
    e = exact_estimate(one, exact([8.3e6 * 1.011]), margin=0.01)
    assert e.ratio == pytest.approx(1.011) and e.low == pytest.approx(1.011) and e.design == "exact"
    runs = exact([100.0, 100.2])  # two runs of one commit: the interval spans them
    assert runs.low < runs.center < runs.high
    wide = exact_estimate(runs, exact([101.1]), margin=0.01)
    assert wide.low < 1.01 < wide.high  # a ratio the runs cannot place on one side of the margin
    assert isinstance(runs, Summary)


def test_time_alone_undecided_is_decided_by_cost(store_url, tmp_path, repo):
    """Wall time straddles the margin (head 4% slower in time only, within the 5% fail margin): cost is equal
    and time does not say slower, so cost passes it."""
    path, base, head = repo
    ingest(store_url, measure_results(tmp_path / "a", base, costs=costs_of()))
    ingest(store_url, measure_results(tmp_path / "b", head, slow=lambda c: 1.04, costs=costs_of()))
    e = evaluate_pair(store_url, path, base, head)
    hvb = [c for c in e.comparisons if c.kind == "head_vs_base"]
    assert hvb and all(c.decision == "pass" and c.signal == "cost" for c in hvb)
    assert all(c.cost_ratio == pytest.approx(1.0) for c in hvb)
    assert all("instructions 1.0000 within 1.0%" in c.reason and "time" in c.reason for c in hvb)
    assert e.verdict == "approve", e.reasons
    assert any("decided by" in r and "cost" in r for r in e.reasons)


def test_cost_never_passes_a_row_whose_time_says_slower(store_url, tmp_path, repo):
    """A serial loop or false sharing adds no instruction at 1 thread: equal cost, and time's estimate above the
    fail margin without (yet) clearing false-discovery control. Not passed by cost: inconclusive, with rounds."""
    path, base, head = repo
    ingest(store_url, measure_results(tmp_path / "a", base, costs=costs_of()))
    slow = lambda c: 1.25 if c["threads"] == 2 else 1.0  # noqa: E731
    ingest(store_url, measure_results(tmp_path / "b", head, slow=slow, costs=costs_of(), noise=0.4))
    e = evaluate_pair(store_url, path, base, head)
    two = [c for c in e.comparisons if c.kind == "head_vs_base" and c.threads == 2]
    assert two and all(c.cost_ratio == pytest.approx(1.0) for c in two)
    assert all(c.decision in ("inconclusive", "fail") and c.signal == "time" for c in two)
    held = [c for c in two if c.decision == "inconclusive"]
    assert held and all("time says slower, not passed by cost" in c.reason for c in held)
    assert all("more rounds requested" in c.reason for c in held)
    assert e.verdict in ("inconclusive", "reject")


def test_three_percent_more_instructions_in_one_cell_rejects_by_cost(store_url, tmp_path, repo):
    path, base, head = repo
    ingest(store_url, measure_results(tmp_path / "a", base, costs=costs_of()))
    ingest(
        store_url,
        measure_results(tmp_path / "b", head, costs=costs_of(lambda c: 1.03 if _walk_hw_4096(c) else 1.0)),
    )
    e = evaluate_pair(store_url, path, base, head)
    assert e.verdict == "reject"
    failed = {(c.kind, c.task, c.impl, c.num_envs, c.threads, c.signal) for c in by_decision(e, "fail")}
    # the 1-thread cost backs the 2-thread cell of the same kernel and scale (cost_for_parallel)
    assert failed == {
        ("head_vs_base", "g1_walk", "handwritten", 4096, 1, "cost"),
        ("head_vs_base", "g1_walk", "handwritten", 4096, 2, "cost"),
        # hand-written is the baseline of assembled: its cost ratio fell, which is never a fail
    }
    [row] = [c for c in by_decision(e, "fail") if c.threads == 1]
    assert row.cost_ratio == pytest.approx(1.03) and "above the 1.0% cost margin" in row.reason


def test_multi_thread_cells_can_be_left_to_time(store_url, tmp_path):
    path = tmp_path / "repo"
    base = gitrepo.commit(path, policy=POLICY + "cost_for_parallel = false\n")
    head = gitrepo.commit(path)
    ingest(store_url, measure_results(tmp_path / "a", base, costs=costs_of()))
    ingest(
        store_url,
        measure_results(tmp_path / "b", head, costs=costs_of(lambda c: 1.03 if _walk_hw_4096(c) else 1.0)),
    )
    e = evaluate_pair(store_url, path, base, head)
    two = [c for c in e.comparisons if c.kind == "head_vs_base" and c.threads == 2]
    assert two and all(c.signal == "time" and c.cost_ratio is None for c in two)
    assert {(c.impl, c.threads) for c in by_decision(e, "fail")} == {("handwritten", 1)}


def test_a_time_regression_fails_even_when_cost_passes(store_url, tmp_path, repo):
    """Parallel overheads (or anything callgrind does not see) show only in time: either signal can fail. The head
    timed against the base in lockstep: its ratios decide."""
    path, base, head = repo
    ingest(store_url, measure_results(tmp_path / "a", base, costs=costs_of()))
    slow = lambda c: 1.3 if c["impl"] == "handwritten" and c["threads"] == 2 else 1.0  # noqa: E731
    rng = np.random.default_rng(3)
    lockstep = lambda c: [slow(c) * rng.lognormal(0, 0.03, 30) for _ in range(3)]  # noqa: E731
    ingest(
        store_url,
        measure_results(
            tmp_path / "b", head, slow=slow, costs=costs_of(), against=lockstep, provenance={"against": base}
        ),
    )
    e = evaluate_pair(store_url, path, base, head)
    assert e.verdict == "reject"
    rows = [c for c in by_decision(e, "fail") if c.kind == "head_vs_base"]
    assert rows and all(c.signal == "time" and c.threads == 2 and c.impl == "handwritten" for c in rows)
    assert all(c.cost_ratio == pytest.approx(1.0) and "within 1.0%" in c.reason for c in rows)
    assert all("in lockstep (3 worker pairs)" in c.reason for c in rows)


def test_raw_times_of_two_moments_never_fail_a_row_on_their_own(store_url, tmp_path, repo):
    """The same 30% as above in raw times only (the base measured once, earlier): the machine's slow phase looks
    exactly like this, so the rows are inconclusive and ask for the lockstep pass."""
    path, base, head = repo
    ingest(store_url, measure_results(tmp_path / "a", base, costs=costs_of()))
    slow = lambda c: 1.3 if c["impl"] == "handwritten" and c["threads"] == 2 else 1.0  # noqa: E731
    ingest(store_url, measure_results(tmp_path / "b", head, slow=slow, costs=costs_of()))
    e = evaluate_pair(store_url, path, base, head)
    rows = [
        c for c in e.comparisons if c.kind == "head_vs_base" and c.impl == "handwritten" and c.threads == 2
    ]
    assert rows and all(c.decision == "inconclusive" and "different moments" in c.reason for c in rows)
    assert not by_decision(e, "fail") and e.verdict == "inconclusive"


def test_implementation_vs_baseline_carries_the_cost_ratio(store_url, tmp_path, repo):
    path, base, head = repo
    ingest(store_url, measure_results(tmp_path / "a", base, costs=costs_of()))
    dearer = lambda c: 1.25 if c["impl"] == "assembled" and c["task"] == "g1_motion" else 1.0  # noqa: E731
    ingest(store_url, measure_results(tmp_path / "b", head, costs=costs_of(dearer)))
    e = evaluate_pair(store_url, path, base, head)
    ivb = {(c.task, c.num_envs, c.threads): c for c in e.comparisons if c.kind == "impl_vs_baseline"}
    walk = ivb[("g1_walk", 4096, 1)]
    assert walk.cost_ratio == pytest.approx(7.6 / 8.3) and walk.decision == "pass" and walk.signal == "cost"
    motion = ivb[("g1_motion", 4096, 1)]
    assert motion.cost_ratio == pytest.approx(1.25 * 7.6 / 8.3) and motion.decision == "fail"
    assert motion.signal == "cost" and "above the 3.0% cost margin" in motion.reason


def test_a_failed_cost_pass_is_an_error_of_the_cells_it_backs_not_a_parity_failure(store_url, tmp_path, repo):
    path, base, head = repo
    ingest(store_url, measure_results(tmp_path / "a", base, costs=costs_of()))
    costs = costs_of()
    ingest(
        store_url,
        measure_results(tmp_path / "b", head, costs=lambda c: "failed" if _walk_hw_4096(c) else costs(c)),
    )
    e = evaluate_pair(store_url, path, base, head)
    assert e.verdict == "error"
    assert not [c for c in e.comparisons if c.kind == "correctness"]
    errors = by_decision(e, "error")
    assert errors and all(c.signal == "cost" and "apt-get install valgrind" in c.reason for c in errors)
    assert {(c.task, c.num_envs) for c in errors} == {("g1_walk", 4096)}


def test_without_cost_results_time_decides_and_says_so(store_url, tmp_path, repo):
    path, base, head = repo
    ingest(store_url, measure_results(tmp_path / "a", base))
    ingest(store_url, measure_results(tmp_path / "b", head))
    e = evaluate_pair(store_url, path, base, head)
    estimated = [c for c in e.comparisons if c.ratio is not None]
    assert estimated and all(c.signal == "time" and "time alone decides" in c.reason for c in estimated)


def test_the_cost_benchmarks_are_ingested_as_exact_cells(store_url, tmp_path):
    from gate.store import db, queries

    commit = gitrepo.commit(tmp_path / "repo", policy=POLICY)
    ingest(store_url, measure_results(tmp_path / "a", commit, costs=costs_of()))
    with db.transaction(store_url) as session:
        cells = [c for *_, c in queries.summaries(session, commit_sha=commit) if c.benchmark in COST.values()]
    assert len(cells) == 4 * 2 * 4 * 2  # metrics x tasks x impls x scales, at 1 thread
    assert all(c.status == "ok" and c.threads == 1 and c.se == 0 and c.low == c.high for c in cells)


def test_calibration_learns_the_cost_floor(store_url, tmp_path, repo):
    from gate.services.calibration import calibrate
    from gate.store import db

    path, _, head = repo
    aa = gitrepo.commit(path, message="A/A: same tree as head")
    jitter = {"numpy": 1.0006, "handwritten": 0.9998, "assembled": 1.0, "assembled_generic": 1.0001}
    ingest(store_url, measure_results(tmp_path / "a", head, costs=costs_of()))
    ingest(
        store_url, measure_results(tmp_path / "b", aa, costs=costs_of(lambda c: jitter[c["impl"]]), seed=1)
    )
    with db.transaction(store_url) as session:
        floors = calibrate(session, base_sha=head, head_sha=aa)
    assert 0.0006 <= floors[("runner-1", "cost")].noise_floor < 0.0015  # Q3 + 3 IQR, at least the largest
    assert floors[("runner-1", "cost")].cells == 16  # tasks x impls x scales at 1 thread


def test_a_time_fail_stands_when_the_cost_pass_failed(store_url, tmp_path, repo):
    path, base, head = repo
    ingest(store_url, measure_results(tmp_path / "a", base, costs=costs_of()))
    costs = costs_of()
    slow = lambda c: 1.3 if _walk_hw_4096(c) and c["threads"] == 1 else 1.0  # noqa: E731
    rng = np.random.default_rng(4)
    lockstep = lambda c: [slow(c) * rng.lognormal(0, 0.03, 30) for _ in range(3)]  # noqa: E731
    failed_cost = lambda c: "failed" if _walk_hw_4096(c) else costs(c)  # noqa: E731
    ingest(
        store_url,
        measure_results(
            tmp_path / "b", head, slow=slow, costs=failed_cost, against=lockstep, provenance={"against": base}
        ),
    )
    e = evaluate_pair(store_url, path, base, head)
    assert e.verdict == "reject"
    [row] = [c for c in by_decision(e, "fail") if c.kind == "head_vs_base"]
    assert (row.threads, row.signal) == (1, "time") and "apt-get install valgrind" in row.reason


def test_cost_counts_of_zero_are_valid():
    assert exact([0.0]).center == 0.0  # a kernel with no simulated LL miss
    assert exact_estimate(exact([0.0]), exact([0.0]), margin=0.01).ratio == 1.0
    with pytest.raises(InsufficientData):
        exact([-1.0])
    with pytest.raises(InsufficientData):
        exact([float("nan")])


def test_the_cost_pass_record_in_the_sidecar_gives_every_metric_over_asvs_tracks(store_url, tmp_path):
    """asv tracks only instructions in the quick profile; the gate reads every metric from the pass's record."""
    import json
    import math

    from benchmarks import _common
    from gate.store import db, queries

    commit = gitrepo.commit(tmp_path / "repo", policy=POLICY)
    results = measure_results(tmp_path / "a", commit, costs=costs_of())  # asv's tracks say the defaults
    cells = [
        {
            "task": "g1_walk",
            "impl": "assembled",
            "num_envs": 4096,
            "kind": "update_state",
            "instructions": 7.0e6,
            "l1_misses": 1.0e5,
            "ll_misses": 9.0e4,
            "estimated_cycles": 1.5e7,
            "error": "",
        },
        {
            "task": "g1_walk",
            "impl": "handwritten",
            "num_envs": 64,
            "kind": "collector",
            "instructions": 2.5e6,
            "l1_misses": 1.0e4,
            "ll_misses": 9.0e3,
            "estimated_cycles": 4.0e6,
            "error": "",
        },
        {
            "task": "g1_motion",
            "impl": "assembled",
            "num_envs": 4096,
            "kind": "update_state",
            "instructions": None,
            "l1_misses": None,
            "ll_misses": None,
            "estimated_cycles": None,
            "error": "SIGSEGV",
        },
        {
            "task": "g1_motion",
            "impl": "handwritten",
            "num_envs": 4096,
            "kind": "update_state",
            "instructions": 2.8e7,
            "l1_misses": None,
            "ll_misses": None,
            "estimated_cycles": None,
            "error": "",
        },
    ]
    line = _common.sidecar_line(
        "cost", {"cost": {"cells": cells}}, commit=commit, env="env", applied=_common.place()
    )
    del line["provenance"]  # as the other records of these results (asv_results.write): none recorded
    with open(results.parent / "fusegate" / commit[:8] / "records.jsonl", "a") as f:
        f.write(json.dumps(line) + "\n")
    ingest(store_url, results)
    with db.transaction(store_url) as session:
        got = {
            (c.benchmark, c.task, c.impl, c.num_envs): c
            for *_, c in queries.summaries(session, commit_sha=commit)
            if c.benchmark in COST_BENCHMARKS
        }
    # the record's cells only (asv's tracks of the same commit are not read); without the cache simulation a
    # cell has its instructions and nothing else
    assert len(got) == 4 * 3 + 1
    assert (COST["l1_misses"], "g1_motion", "handwritten", 4096) not in got
    l1 = got[(COST["l1_misses"], "g1_walk", "assembled", 4096)]
    assert math.exp(l1.center) == pytest.approx(1.0e5, rel=1e-4)  # stored as log(1 + x)
    collector = got[(COLLECTOR_COST["instructions"], "g1_walk", "handwritten", 64)]
    assert math.exp(collector.center) == pytest.approx(2.5e6, rel=1e-4)
    failed = got[(COST["estimated_cycles"], "g1_motion", "assembled", 4096)]
    assert failed.status == "failed" and "SIGSEGV" in failed.message


def test_paired_ratios_head_vs_base_pass_an_aa_and_catch_a_relative_slowdown_cost_cannot_see(
    store_url, tmp_path, repo
):
    """``paired_head_vs_base``: the implementation's in-process ratio to the baseline, head over base. An A/A
    passes (by cost: the ratio of cost ratios is 1); an assembled kernel 10% slower relative to the hand-written
    one in time, with the same instructions, fails by time; 3% more instructions in it fails by cost."""
    path, base, head = repo
    ingest(store_url, measure_results(tmp_path / "a", base, costs=costs_of()))
    ingest(store_url, measure_results(tmp_path / "b", head, costs=costs_of(), seed=1))
    aa = [
        c for c in evaluate_pair(store_url, path, base, head).comparisons if c.kind == "paired_head_vs_base"
    ]
    assert len(aa) == 2 * 2 * 2  # the compared implementation per task, scale and thread count
    assert all(c.decision == "pass" and c.signal == "cost" and c.cost_ratio == pytest.approx(1.0) for c in aa)
    assert all(0.95 < c.ratio < 1.05 and c.high - c.low < 0.1 for c in aa)  # narrow: measured in one process

    slower = gitrepo.commit(path, message="assembled 10% slower per call, same instructions")
    ingest(
        store_url,
        measure_results(
            tmp_path / "c",
            slower,
            costs=costs_of(),
            seed=2,
            paired_effect=lambda c: 1.1 if c["impl"] == "assembled" else 1.0,
        ),
    )
    e = evaluate_pair(store_url, path, base, slower)
    failed = [c for c in e.comparisons if c.kind == "paired_head_vs_base" and c.decision == "fail"]
    assert e.verdict == "reject" and len(failed) == 8 and all(c.signal == "time" for c in failed)

    dearer = gitrepo.commit(path, message="3% more instructions in the assembled walk kernel")
    ingest(
        store_url,
        measure_results(
            tmp_path / "d",
            dearer,
            seed=3,
            costs=costs_of(lambda c: 1.03 if (c["task"], c["impl"]) == ("g1_walk", "assembled") else 1.0),
        ),
    )
    by_cost = [
        c
        for c in evaluate_pair(store_url, path, base, dearer).comparisons
        if c.kind == "paired_head_vs_base" and c.decision == "fail"
    ]
    assert {(c.task, c.signal) for c in by_cost} == {("g1_walk", "cost")}
    assert all(c.cost_ratio == pytest.approx(1.03) for c in by_cost)


def test_an_implausible_cost_drop_is_an_error_never_a_pass(store_url, tmp_path, repo):
    """Instructions down 99% while time stays: a meter that stopped counting (a cost worker that runs the kernel
    uninstrumented), not a faster kernel."""
    path, base, head = repo
    ingest(store_url, measure_results(tmp_path / "a", base, costs=costs_of()))
    hidden = lambda c: 0.009 if c["impl"] == "assembled" else 1.0  # noqa: E731
    ingest(
        store_url,
        measure_results(
            tmp_path / "b",
            head,
            costs=costs_of(hidden),
            lockstep_with=base,
            slow=lambda c: 1.08 if c["impl"] == "assembled" else 1.0,
        ),
    )
    e = evaluate_pair(store_url, path, base, head)
    rows = [c for c in e.comparisons if c.kind == "head_vs_base" and c.impl == "assembled"]
    assert rows and all(c.decision in ("error", "fail") for c in rows)
    assert any(c.decision == "error" and "implausible" in c.reason for c in rows)
    assert not any(c.decision == "pass" for c in rows) and e.verdict in ("error", "reject")


def test_a_cost_measurement_that_saw_no_call_is_an_error(store_url, tmp_path):
    import json

    from benchmarks import _common
    from gate.store import db, queries

    commit = gitrepo.commit(tmp_path / "r2", policy=POLICY)
    results = measure_results(tmp_path / "c", commit, costs=costs_of())
    cells = [
        {
            "task": "g1_walk",
            "impl": "assembled",
            "num_envs": 4096,
            "kind": "update_state",
            "calls": 0,
            "instructions": 1.0,
            "l1_misses": None,
            "ll_misses": None,
            "estimated_cycles": None,
            "error": "",
        }
    ]
    line = _common.sidecar_line(
        "cost", {"cost": {"cells": cells}}, commit=commit, env="env", applied=_common.place()
    )
    del line["provenance"]
    with open(results.parent / "fusegate" / commit[:8] / "records.jsonl", "a") as f:
        f.write(json.dumps(line) + "\n")
    ingest(store_url, results)
    with db.transaction(store_url) as session:
        (cell,) = [
            c
            for *_, c in queries.summaries(session, commit_sha=commit)
            if c.benchmark == COST["instructions"] and c.impl == "assembled"
        ]
    assert cell.status == "failed" and "saw no call" in cell.message
