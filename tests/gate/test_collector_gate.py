"""The end-to-end collector in the gate: correctness rows, paired step time against the baseline, head vs base."""

from __future__ import annotations

import json

import pytest

from gate.ingest import bundle
from tests.gate import asv_results, gitrepo
from tests.gate.builders import POLICY, by_decision, collector_results, evaluate_pair, ingest

BROKEN = (
    "Collector('g1_motion', 'assembled', num_envs=64, threads=1) raised ValueError: plan 3f2a has no 'obs' "
    "observation group for the policy; reproduce: fusegate collect --check --task g1_motion --impl assembled "
    "--num-envs 64 --threads 1 --steps 16"
)


@pytest.fixture
def repo(tmp_path):
    return gitrepo.base_and_head(tmp_path / "repo", policy=POLICY)


def _rows(evaluation, kind):
    return {(c.task, c.impl): c for c in evaluation.comparisons if c.kind == kind}


def test_an_unchanged_collector_passes_with_its_phases_and_cost(store_url, tmp_path, repo):
    path, base, head = repo
    ingest(store_url, collector_results(tmp_path / "a", base, seed=1))
    ingest(store_url, collector_results(tmp_path / "b", head, seed=2))
    e = evaluate_pair(store_url, path, base, head)
    assert e.verdict == "approve", [c for c in e.comparisons if c.decision != "pass"]
    paired = _rows(e, "collector_vs_baseline")
    assert set(paired) == {("g1_walk", "assembled"), ("g1_motion", "assembled")}  # the policy's compare
    for c in paired.values():
        assert (c.num_envs, c.threads, c.margin) == (64, 1, 0.03) and c.decision == "pass"
        assert "physics 450, kernel 0.4, rest 40" in c.reason and "handwritten physics" in c.reason
        assert c.cost_ratio == pytest.approx(7.6 / 8.3)  # the collector step's cost, assembled / hand-written
    hvb = _rows(e, "collector_head_vs_base")
    assert set(hvb) == {
        (t, i) for t in ("g1_walk", "g1_motion") for i in ("handwritten", *asv_results.PAIRED_IMPLS)
    }
    assert all(
        c.decision == "pass" and c.signal == "cost" and c.cost_ratio == pytest.approx(1.0)
        for c in hvb.values()
    )


def test_a_collector_that_fails_to_construct_rejects_naming_task_impl_and_error(store_url, tmp_path, repo):
    path, base, head = repo
    ingest(store_url, collector_results(tmp_path / "a", base, seed=1))
    ingest(
        store_url,
        collector_results(tmp_path / "b", head, seed=2, failed={("g1_motion", "assembled"): BROKEN}),
    )
    e = evaluate_pair(store_url, path, base, head)
    assert e.verdict == "reject"
    (row,) = by_decision(e, "fail")
    assert (row.kind, row.task, row.impl, row.num_envs, row.threads) == (
        "correctness",
        "g1_motion",
        "assembled",
        64,
        1,
    )
    assert row.reason == BROKEN  # the benchmark's message, ending with the command that reproduces it
    assert "CollectorCheck" in row.detail and "CollectorPaired" in row.detail
    # nothing else stands in for it: no paired row, no "measured on base but not on head" error
    assert ("g1_motion", "assembled") not in _rows(e, "collector_vs_baseline")
    assert ("g1_motion", "assembled") not in _rows(e, "collector_head_vs_base")
    assert not by_decision(e, "error")


def test_a_slower_collector_step_fails_by_time_and_more_instructions_fail_by_cost(store_url, tmp_path, repo):
    path, base, head = repo
    walk = lambda c: c["task"] == "g1_walk"  # noqa: E731
    ingest(store_url, collector_results(tmp_path / "a", base, seed=1))
    ingest(
        store_url,
        collector_results(
            tmp_path / "b",
            head,
            seed=2,
            effect=lambda c: 1.10 if walk(c) and c["impl"] == "assembled" else 1.0,
            cost_scale=lambda c: 1.03 if walk(c) and c["impl"] == "handwritten" else 1.0,
        ),
    )
    e = evaluate_pair(store_url, path, base, head)
    assert e.verdict == "reject"
    paired = _rows(e, "collector_vs_baseline")
    assert (paired[("g1_walk", "assembled")].decision, paired[("g1_walk", "assembled")].signal) == (
        "fail",
        "time",
    )
    assert paired[("g1_motion", "assembled")].decision == "pass"
    hvb = _rows(e, "collector_head_vs_base")
    failed = {k for k, c in hvb.items() if c.decision == "fail"}
    assert failed == {("g1_walk", "handwritten")}
    assert hvb[("g1_walk", "handwritten")].signal == "cost"
    assert hvb[("g1_walk", "handwritten")].cost_ratio == pytest.approx(1.03)


def test_collector_paired_records_are_validated_at_the_boundary(tmp_path):
    results = collector_results(tmp_path / "a", "a" * 40)
    (sidecar,) = (tmp_path / "a" / "fusegate").glob("*/records.jsonl")
    text = sidecar.read_text().replace('"kernel": 0.4', '"kernel": -1.0', 1)
    sidecar.write_text(text)
    from gate.ingest import asv_dir

    with pytest.raises(bundle.IngestError, match=r"pairs\[0\]\.base_us\.kernel: must be >= 0"):
        for b in asv_dir.read(results):
            bundle.runs(b)
    records = [json.loads(line) for line in sidecar.read_text().splitlines()]
    bad = next(r for r in records if r["kind"] == "collector_paired")
    bad["pairs"][0]["base_us"]["kernel"] = 0.4
    bad["baseline"] = "h" * 65
    sidecar.write_text("".join(json.dumps(r) + "\n" for r in records))
    with pytest.raises(bundle.IngestError, match=r"baseline: must be a name of 1-64 printable characters"):
        for b in asv_dir.read(results):
            bundle.runs(b)


def test_the_pr_page_and_comment_show_collector_rows_with_the_hot_slice_ones(store_url, tmp_path, repo):
    from fastapi.testclient import TestClient

    from gate.api.app import create_app
    from gate.bot import report
    from gate.policy import Policy

    path, base, head = repo
    ingest(store_url, collector_results(tmp_path / "a", base, seed=1))
    ingest(
        store_url,
        collector_results(tmp_path / "b", head, seed=2, failed={("g1_motion", "assembled"): BROKEN}),
    )
    e = evaluate_pair(store_url, path, base, head)
    with TestClient(create_app(database_url=store_url, repo=path)) as client:
        page = client.get(f"/pr/{base}/{head}")
    assert page.status_code == 200
    for kind in ("correctness", "collector_vs_baseline", "collector_head_vs_base", "impl_vs_baseline"):
        assert f"<td>{kind}</td>" in page.text
    assert "ValueError: plan 3f2a has no &#39;obs&#39; observation group" in page.text
    status = report.verdict_status(e, Policy(), now=e.created_at, deadline=e.created_at)
    body = report.comment(
        status=status,
        base_sha=base,
        head_sha=head,
        base_ref="main",
        link="http://gate/x",
        evaluation=e,
        policy_source=e.policy_source,
    )
    first = next(line for line in body.splitlines() if line.startswith("| runner-1 "))
    assert (
        "| correctness |" in first and "**fail**" in first and "g1_motion" in first and "assembled" in first
    )
    assert "| collector_vs_baseline |" in body


def test_a_baseline_left_unpaired_by_failed_collectors_is_not_an_error(store_url, tmp_path, repo):
    """Every fused g1_motion collector fails: the hand-written one has no step times on the head (it is timed
    only against them), which the correctness rows explain; no "measured on base but not on head" error."""
    path, base, head = repo
    failed = {
        ("g1_motion", impl): BROKEN.replace("'assembled'", repr(impl)) for impl in asv_results.PAIRED_IMPLS
    }
    ingest(store_url, collector_results(tmp_path / "a", base, seed=1))
    ingest(store_url, collector_results(tmp_path / "b", head, seed=2, failed=failed))
    e = evaluate_pair(store_url, path, base, head)
    assert e.verdict == "reject" and not by_decision(e, "error")
    assert {(c.kind, c.impl) for c in by_decision(e, "fail")} == {
        ("correctness", impl) for impl in asv_results.PAIRED_IMPLS
    }
    assert ("g1_motion", "handwritten") not in _rows(e, "collector_head_vs_base")
    assert _rows(e, "collector_head_vs_base")[("g1_walk", "handwritten")].decision == "pass"
