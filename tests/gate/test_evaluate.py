"""The gate's evaluation end to end on the store: verdicts, exit codes, fail-closed errors, policy from the base."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest

from gate import cli
from gate.services.calibration import calibrate
from gate.store import db, queries
from tests.gate import asv_results, gitrepo
from tests.gate.builders import INSTRUCTIONS, POLICY, by_decision, evaluate_pair, ingest, measure_results


@pytest.fixture
def repo(tmp_path):
    return gitrepo.base_and_head(tmp_path / "repo", policy=POLICY)


def test_unchanged_head_is_approved(store_url, tmp_path, repo):
    path, base, head = repo
    ingest(store_url, measure_results(tmp_path / "a", base, seed=1))
    ingest(store_url, measure_results(tmp_path / "b", head, seed=2))
    e = evaluate_pair(store_url, path, base, head)
    assert e.verdict == "approve", [c for c in e.comparisons if c.decision != "pass"]
    kinds = {c.kind for c in e.comparisons}
    assert kinds == {"impl_vs_baseline", "best_threads", "head_vs_base", "paired_head_vs_base"}
    # 2 tasks x 2 N x 2 threads paired cells for "assembled", 4 best-thread cells, 28 head-vs-base time cells,
    # and the 8 paired cells head vs base (time alone here: no cost results, and they decide)
    assert len(e.comparisons) == 8 + 4 + 28 + 8
    assert "at base" in e.policy_source and base[:12] in e.policy_source


def test_a_slow_assembled_kernel_is_rejected_naming_the_cells(store_url, tmp_path, repo):
    path, base, head = repo
    slow = {("g1_walk", 32768, 1), ("g1_walk", 32768, 2)}
    ingest(store_url, measure_results(tmp_path / "a", base))
    ingest(
        store_url,
        measure_results(
            tmp_path / "b",
            head,
            paired_effect=lambda c: (
                1.25 if (c["task"], c["num_envs"], c["threads"]) in slow and c["impl"] == "assembled" else 1.0
            ),
        ),
    )
    e = evaluate_pair(store_url, path, base, head)
    assert e.verdict == "reject"
    failed = {(c.task, c.num_envs, c.threads) for c in by_decision(e, "fail") if c.kind == "impl_vs_baseline"}
    assert failed == slow
    assert all(
        1.2 < c.ratio < 1.3 and c.low > 1.03 for c in by_decision(e, "fail") if c.kind == "impl_vs_baseline"
    )


def test_extra_impls_only_add_checks(store_url, tmp_path, repo):
    """--impl assembled_generic judges the generic kernel too; a 3x slower one is rejected."""
    path, base, head = repo
    ingest(store_url, measure_results(tmp_path / "a", base))
    ingest(
        store_url,
        measure_results(
            tmp_path / "b", head, paired_effect=lambda c: 3.0 if c["impl"] == "assembled_generic" else 1.0
        ),
    )
    assert evaluate_pair(store_url, path, base, head).verdict == "approve"
    e = evaluate_pair(store_url, path, base, head, extra_impls=["assembled_generic"])
    assert e.verdict == "reject"
    assert {c.impl for c in by_decision(e, "fail")} == {"assembled_generic"}


def test_head_slower_than_base_is_rejected(store_url, tmp_path, repo):
    path, base, head = repo
    ingest(store_url, measure_results(tmp_path / "a", base))
    ingest(
        store_url,
        measure_results(
            tmp_path / "b",
            head,
            slow=lambda c: 1.2 if c["impl"] == "handwritten" and c["threads"] == 1 else 1.0,
            lockstep_with=base,
        ),
    )
    e = evaluate_pair(store_url, path, base, head)
    assert e.verdict == "reject"
    failed = {(c.kind, c.impl, c.threads) for c in by_decision(e, "fail")}
    assert failed == {("head_vs_base", "handwritten", 1)}


KERNELS = {
    f"{t}/{i}": hashlib.sha256(f"{t}/{i}".encode()).hexdigest()[:16]
    for t in ("g1_walk", "g1_motion")
    for i in INSTRUCTIONS
}


@pytest.mark.parametrize("same_sources_pass", [True, False])
def test_a_kernel_with_the_base_s_sources_passes_head_vs_base_by_them(store_url, tmp_path, same_sources_pass):
    """The hand-written kernels' sources are the base's (the same id in both runs): a slow phase that doubles
    their lockstep ratios fails nothing while the policy trusts sources; the edited assembled kernel, 20% slower,
    is still judged by time."""
    path, base, head = gitrepo.base_and_head(
        tmp_path / "repo", policy=POLICY + f"same_sources_pass = {str(same_sources_pass).lower()}\n"
    )
    edited = {**KERNELS, "g1_walk/assembled": "ab" * 8, "g1_motion/assembled": "cd" * 8}
    ingest(store_url, measure_results(tmp_path / "a", base, provenance={"kernels": KERNELS}))
    slow = {"handwritten": 2.0, "assembled": 1.2}
    ingest(
        store_url,
        measure_results(
            tmp_path / "b",
            head,
            slow=lambda c: slow.get(c["impl"], 1.0) if c["threads"] == 1 else 1.0,
            lockstep_with=base,
            provenance={"kernels": edited},
        ),
    )
    e = evaluate_pair(store_url, path, base, head)
    assert e.verdict == "reject"
    rows = [c for c in e.comparisons if c.kind == "head_vs_base"]
    failed = {(c.impl, c.threads) for c in rows if c.decision == "fail"}
    by_sources = [c for c in rows if c.signal == "sources"]
    if same_sources_pass:
        assert failed == {("assembled", 1)}
        assert {c.impl for c in by_sources} == {"numpy", "handwritten", "assembled_generic"}
        assert all(c.decision == "pass" and KERNELS[f"{c.task}/{c.impl}"] in c.reason for c in by_sources)
    else:
        assert failed == {("assembled", 1), ("handwritten", 1)} and not by_sources


@pytest.mark.parametrize("same_sources_pass", [True, False])
def test_a_paired_ratio_of_two_unchanged_kernels_passes_by_sources(store_url, tmp_path, same_sources_pass):
    """g1_motion's kernels are the base's on both sides of its paired ratio: a noisy 1.3x on that ratio is the
    same code timed twice and passes by sources while the policy trusts them; g1_walk's edited assembled kernel,
    1.3x slower against the unchanged baseline, is still judged by its ratio."""
    path, base, head = gitrepo.base_and_head(
        tmp_path / "repo", policy=POLICY + f"same_sources_pass = {str(same_sources_pass).lower()}\n"
    )
    ingest(store_url, measure_results(tmp_path / "a", base, provenance={"kernels": KERNELS}))
    ingest(
        store_url,
        measure_results(
            tmp_path / "b",
            head,
            paired_effect=lambda c: 1.3 if c["impl"] == "assembled" else 1.0,
            provenance={"kernels": {**KERNELS, "g1_walk/assembled": "ab" * 8}},
        ),
    )
    e = evaluate_pair(store_url, path, base, head)
    rows = [c for c in e.comparisons if c.kind == "paired_head_vs_base" and c.impl == "assembled"]
    walk = [c for c in rows if c.task == "g1_walk"]
    motion = [c for c in rows if c.task == "g1_motion"]
    assert walk and motion
    assert all(c.signal != "sources" for c in walk)
    assert any(c.decision == "fail" for c in walk)
    if same_sources_pass:
        assert all(c.decision == "pass" and c.signal == "sources" for c in motion)
        assert all(KERNELS["g1_motion/assembled"] in c.reason for c in motion)
    else:
        assert all(c.signal != "sources" for c in motion) and any(c.decision == "fail" for c in motion)


def test_kernel_ids_must_be_in_every_run_of_both_to_count():
    from gate.evaluate.evaluation import same_sources

    one = {"kernels": {"g1_walk/handwritten": "aa" * 8, "g1_walk/assembled": "bb" * 8}}
    other = {"kernels": {"g1_walk/handwritten": "aa" * 8, "g1_walk/assembled": "cc" * 8}}
    assert same_sources([one], [other]) == {"g1_walk/handwritten": "aa" * 8}
    assert same_sources([one, other], [one]) == {"g1_walk/handwritten": "aa" * 8}
    assert same_sources([one], [one, {}]) == {}  # a base run that recorded no ids: nothing is known the same
    assert same_sources([one], []) == {}


def test_a_parity_failure_rejects_whatever_the_timings(store_url, tmp_path, repo):
    path, base, head = repo
    ingest(store_url, measure_results(tmp_path / "a", base))
    ingest(
        store_url,
        measure_results(tmp_path / "b", head, failed=frozenset({("g1_motion", "assembled", 4096, 2)})),
    )
    e = evaluate_pair(store_url, path, base, head)
    assert e.verdict == "reject"
    [*rows] = [c for c in by_decision(e, "fail") if c.kind == "correctness"]
    assert {(c.task, c.impl, c.num_envs, c.threads) for c in rows} == {("g1_motion", "assembled", 4096, 2)}


def test_missing_data_is_an_error_never_an_approval(store_url, tmp_path, repo):
    path, base, head = repo
    assert evaluate_pair(store_url, path, base, head).verdict == "error"  # nothing measured at all
    ingest(store_url, measure_results(tmp_path / "b", head))
    e = evaluate_pair(store_url, path, base, head)  # base never measured
    assert e.verdict == "error"
    assert any("base" in c.reason and c.decision == "error" for c in e.comparisons)


def test_a_required_machine_without_results_is_an_error(store_url, tmp_path):
    path = tmp_path / "repo"
    base = gitrepo.commit(path, policy=POLICY + 'required_machines = ["runner-1", "runner-2"]\n')
    head = gitrepo.commit(path)
    ingest(store_url, measure_results(tmp_path / "a", base))
    ingest(store_url, measure_results(tmp_path / "b", head))
    e = evaluate_pair(store_url, path, base, head)
    assert e.verdict == "error"
    [missing] = [c for c in e.comparisons if c.kind == "machine"]
    assert missing.machine == "runner-2" and missing.decision == "error"


def _one_cell(c):
    return (c["task"], c["impl"], c["num_envs"], c["threads"]) == ("g1_walk", "assembled", 4096, 1)


def test_a_cell_without_paired_samples_is_an_error(store_url, tmp_path, repo):
    path, base, head = repo
    ingest(store_url, measure_results(tmp_path / "a", base))
    ingest(store_url, measure_results(tmp_path / "b", head, skip_pairs=_one_cell))
    e = evaluate_pair(store_url, path, base, head)
    assert e.verdict == "error"
    [row] = by_decision(e, "error")
    assert (row.kind, row.task, row.impl, row.num_envs, row.threads) == (
        "impl_vs_baseline",
        "g1_walk",
        "assembled",
        4096,
        1,
    )
    assert "no paired samples" in row.reason


def test_a_cell_the_heads_profile_dropped_is_named_not_compared(store_url, tmp_path, repo):
    """The head's benchmark skips a cell it ran on base (asv's NotImplementedError, e.g. the reference timed at
    one scale only): no head-vs-base row for it, a reason that names it; a compared implementation's missing
    paired cell is still an error."""
    path, base, head = repo
    ingest(store_url, measure_results(tmp_path / "a", base))
    ingest(store_url, measure_results(tmp_path / "b", head, skip=_one_cell))
    e = evaluate_pair(store_url, path, base, head)
    assert e.verdict == "error"
    reasons = {(c.kind, c.reason) for c in by_decision(e, "error")}
    assert not any(kind == "head_vs_base" for kind, _ in reasons)
    assert any(kind == "impl_vs_baseline" and "no paired samples" in r for kind, r in reasons)
    assert any(
        "1 cell(s) measured on base are not in the head's benchmark profile" in r
        and "g1_walk/assembled N=4096 thr=1" in r
        for r in e.reasons
    )


def test_a_benchmark_the_head_did_not_run_at_all_is_an_error(store_url, tmp_path, repo):
    path, base, head = repo
    ingest(store_url, measure_results(tmp_path / "a", base))
    costs = {"instructions": 1e6, "l1_misses": 1e4, "ll_misses": 1e3, "estimated_cycles": 2e6}
    ingest(store_url, measure_results(tmp_path / "b", head, skip=lambda c: True, costs=lambda c: costs))
    e = evaluate_pair(store_url, path, base, head)
    assert e.verdict == "error"
    assert ("head_vs_base", "measured on base but not on head") in {
        (c.kind, c.reason) for c in by_decision(e, "error")
    }


def test_the_policy_comes_from_the_base_commit_not_the_head(store_url, tmp_path):
    """A PR that relaxes the margin to 50% is still judged by the base's 3%."""
    path = tmp_path / "repo"
    base = gitrepo.commit(path, policy=POLICY)
    head = gitrepo.commit(path, policy='compare = ["assembled"]\nmargin = 0.5\n', message="relax the gate")
    ingest(store_url, measure_results(tmp_path / "a", base))
    ingest(
        store_url,
        measure_results(
            tmp_path / "b", head, paired_effect=lambda c: 1.2 if c["impl"] == "assembled" else 1.0
        ),
    )
    e = evaluate_pair(store_url, path, base, head)
    assert e.verdict == "reject"
    assert e.policy["margin"] == 0.03 and base[:12] in e.policy_source


def test_calibration_raises_the_margin_of_cross_process_cells(store_url, tmp_path, repo):
    path, base, head = repo
    aa = gitrepo.commit(path, message="A/A: same tree as head")
    noisy = lambda c: 1.15 if c["threads"] == 2 else 1.0  # noqa: E731
    ingest(store_url, measure_results(tmp_path / "a", head, seed=3))
    ingest(store_url, measure_results(tmp_path / "b", aa, slow=noisy, seed=4))
    with db.transaction(store_url) as session:
        floors = calibrate(session, base_sha=head, head_sha=aa)
    assert floors[("runner-1", 2)].noise_floor > 0.10 > floors[("runner-1", 1)].noise_floor
    ingest(store_url, measure_results(tmp_path / "c", base, seed=5))
    e = evaluate_pair(store_url, path, base, aa)
    two = [c for c in e.comparisons if c.kind == "head_vs_base" and c.threads == 2]
    # the floor makes a fail harder (15% noise is not a regression) but never widens the pass margin
    assert two and all(c.margin == 0.05 and "noise floor" in c.reason and c.decision != "fail" for c in two)
    assert not any(c.decision == "pass" and c.high > 1.05 for c in e.comparisons)


def test_cli_gate_exit_codes_and_json(tmp_path, repo, monkeypatch, capsys):
    path, base, head = repo
    url = f"sqlite:///{tmp_path / 'cli.db'}"
    monkeypatch.setenv("FUSEGATE_REPO", str(path))
    measure_results(tmp_path / "m", base)
    results = measure_results(
        tmp_path / "m", head, paired_effect=lambda c: 1.3 if c["impl"] == "assembled" else 1.0
    )
    code = cli.main(
        ["gate", "--base", base, "--head", "main", "--results", str(results), "--db", url, "--json"]
    )
    out = json.loads(capsys.readouterr().out)
    assert code == 1 and out["verdict"] == "reject" and out["head_sha"] == head
    assert (
        cli.main(["gate", "--base", base, "--head", head, "--db", url, "--results", str(tmp_path / "none")])
        == 1
    )
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].startswith("reject: ") and "fail   " in "\n".join(printed)  # the summary, by default
    assert cli.main(["gate", "--base", base, "--head", head, "--db", url, "--rows", "all"]) == 1
    assert "verdict: REJECT" in capsys.readouterr().out  # every row's table and the reasons
    assert cli.main(["gate", "--base", "no-such-ref", "--db", url]) == 64  # a bad value: usage
    assert "cannot resolve 'no-such-ref'" in capsys.readouterr().err
    bad = gitrepo.commit(path, policy="margin = 'wide'\n", message="a policy that cannot be read")
    assert cli.main(["gate", "--base", bad, "--head", head, "--db", url]) == 78  # fix the configuration
    assert "margin must be int or float, got 'wide'" in capsys.readouterr().err


def test_a_head_measured_on_other_hardware_under_the_same_name_is_an_error(store_url, tmp_path, repo):
    path, base, head = repo
    ingest(store_url, measure_results(tmp_path / "a", base))
    results = measure_results(tmp_path / "b", head)
    [sidecar] = (tmp_path / "b" / "fusegate" / head[:8]).glob("*.jsonl")
    lines = [json.loads(x) for x in sidecar.read_text().splitlines()]
    for line in lines:
        line["machine"]["cpu_model"] = "another CPU"
    sidecar.write_text("".join(json.dumps(x) + "\n" for x in lines))
    ingest(store_url, results)
    e = evaluate_pair(store_url, path, base, head)
    assert e.verdict == "error"
    assert any(c.kind == "machine" and "hardware fingerprint differs" in c.reason for c in e.comparisons)


def test_one_process_is_not_enough_to_pass(store_url, tmp_path, repo):
    path, base, head = repo
    rng = np.random.default_rng(9)
    for root, sha in ((tmp_path / "a", base), (tmp_path / "b", head)):
        ingest(
            store_url,
            asv_results.write(
                root,
                machine="runner-1",
                commit=sha,
                times=lambda cell: (
                    None if cell["impl"] == "numpy" and cell["threads"] == 2 else rng.lognormal(-5, 0.01, 10)
                ),
                pairs=lambda cell: [rng.lognormal(0, 0.01, 40)],
            ),
        )
    e = evaluate_pair(store_url, path, base, head)
    assert e.verdict == "inconclusive"
    assert all(c.decision == "inconclusive" for c in e.comparisons)
    # paired cells tight enough to pass say what is missing
    assert any("a pass needs 2" in c.reason for c in e.comparisons if c.kind == "impl_vs_baseline")


def test_extra_impl_cells_cannot_dilute_the_policys_fails(store_url, tmp_path, repo):
    """--impl adds its own FDR family: many clean extra cells leave a real fail a fail."""
    path, base, head = repo
    ingest(store_url, measure_results(tmp_path / "a", base))
    slow = lambda c: 1.08 if c["impl"] == "assembled" and c["num_envs"] == 4096 and c["threads"] == 1 else 1.0  # noqa: E731
    ingest(store_url, measure_results(tmp_path / "b", head, paired_effect=slow))
    alone = evaluate_pair(store_url, path, base, head)
    with_extra = evaluate_pair(store_url, path, base, head, extra_impls=["assembled_generic"])

    def key(e):
        return {
            (c.kind, c.impl, c.task, c.num_envs, c.threads, c.decision)
            for c in e.comparisons
            if c.impl == "assembled"
        }

    assert key(alone) == key(with_extra)


def test_a_parity_failure_is_one_row_per_cell_naming_the_exception(store_url, tmp_path, repo):
    """Tried as a new user would: two identical rows per cell without asv's message, then a best_threads row
    saying 'no timing samples'. Now one row per cell with the exception, and no row about missing timings."""
    path, base, head = repo
    ingest(store_url, measure_results(tmp_path / "a", base))
    cells = {("g1_motion", "assembled", 4096, t) for t in (1, 2)}
    message = "RuntimeError: g1_motion/assembled fails parity with the NumPy reference: reward (max abs 0.31)"
    ingest(
        store_url,
        measure_results(
            tmp_path / "b", head, failed=frozenset(cells), messages=dict.fromkeys(cells, message)
        ),
    )
    e = evaluate_pair(store_url, path, base, head)
    assert e.verdict == "reject"
    rows = [c for c in e.comparisons if c.kind == "correctness"]
    assert sorted((c.task, c.impl, c.num_envs, c.threads) for c in rows) == sorted(cells)
    assert all(
        message in c.reason and c.detail.startswith("HotSlice, Paired") and c.signal == "none" for c in rows
    )
    assert not [c for c in e.comparisons if c.kind == "best_threads" and c.decision == "error"]
    assert not any("pool=" not in c.detail for c in rows)  # the placement names its pool, not a thread count


def test_pairs_timed_against_another_baseline_than_the_policys_are_an_error_row(store_url, tmp_path):
    """The meter records what it paired against; a policy naming another baseline gets an error, not rows that
    judge against the wrong kernel."""
    path = tmp_path / "repo"
    base = gitrepo.commit(path, policy='compare = ["assembled"]\nbaseline = "numpy"\n')
    head = gitrepo.commit(path, message="a change")
    ingest(store_url, measure_results(tmp_path / "a", base))
    ingest(store_url, measure_results(tmp_path / "b", head, seed=3))
    with db.transaction(store_url) as session:
        [runs] = queries.provenances(session, commit_sha=head).values()
        assert [r["baseline"] for r in runs] == ["handwritten"]  # recorded from the paired records
    e = evaluate_pair(store_url, path, base, head)
    [row] = [c for c in e.comparisons if c.kind == "meter"]
    assert (row.decision, row.baseline) == ("error", "numpy") and "against handwritten" in row.reason
    assert e.verdict == "error"
    good = gitrepo.commit(path, policy='compare = ["assembled"]\n', message="the meter's baseline")
    ingest(store_url, measure_results(tmp_path / "c", good, seed=4))
    assert not [c for c in evaluate_pair(store_url, path, good, head).comparisons if c.kind == "meter"]
