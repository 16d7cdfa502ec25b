"""How a head was measured, judged: the base's meter or an error row, and no measurement for an unchanged subject."""

from __future__ import annotations

import pytest

from gate.runner import trees
from tests.gate.builders import POLICY, commit_files, evaluate_pair, ingest, measure_results

FILES = {
    "kernels/walk.py": "SPEED = 1\n",
    "kernels/reference/tolerance.py": "ATOL = 1e-5\n",
    "gate/meter/bench.py": "PAIRS = 40\n",
    "benchmarks/hot_slice.py": "ROUNDS = 6\n",
    "README.md": "docs\n",
    "fusegate-policy.toml": POLICY,
}


@pytest.fixture
def repo(tmp_path):
    from tests.gate.gitrepo import git

    path = tmp_path / "repo"
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    return path, commit_files(path, FILES, "base")


def _rows(e, kind="meter"):
    return [c for c in e.comparisons if c.kind == kind]


def test_a_head_that_edits_the_meter_measured_with_the_base_meter_gets_a_row_naming_the_files(
    store_url, tmp_path, repo
):
    path, base = repo
    head = commit_files(
        path, {"kernels/walk.py": "SPEED = 2\n", "gate/meter/bench.py": "PAIRS = 1\n"}, "head"
    )
    ingest(store_url, measure_results(tmp_path / "a", base, provenance=trees.ids(path, base)))
    tree = trees.measurement_tree(path, head, meter=base)
    ingest(
        store_url,
        measure_results(tmp_path / "b", head, seed=1, provenance={**tree.ids, "meter_commit": base}),
    )
    e = evaluate_pair(store_url, path, base, head)
    (row,) = _rows(e)
    assert row.decision == "pass" and "gate/meter/bench.py" in row.reason and "base's meter" in row.reason
    assert e.verdict == "approve", [c.reason for c in e.comparisons if c.decision != "pass"]


def test_a_head_measured_with_its_own_edited_meter_is_an_error(store_url, tmp_path, repo):
    path, base = repo
    head = commit_files(path, {"gate/meter/bench.py": "PAIRS = 1\n"}, "head: a meter that cannot see")
    ingest(store_url, measure_results(tmp_path / "a", base, provenance=trees.ids(path, base)))
    ingest(store_url, measure_results(tmp_path / "b", head, seed=1, provenance=trees.ids(path, head)))
    e = evaluate_pair(store_url, path, base, head)
    (row,) = _rows(e)
    assert row.decision == "error" and "another meter than the base's" in row.reason
    assert "gate/meter/bench.py" in row.reason and "--measure" in row.reason
    assert e.verdict == "error"


def test_results_that_cannot_say_their_meter_are_an_error_only_when_the_head_edits_it(
    store_url, tmp_path, repo
):
    path, base = repo
    ingest(store_url, measure_results(tmp_path / "a", base))
    kernel_only = commit_files(path, {"kernels/walk.py": "SPEED = 3\n"}, "kernels only")
    ingest(store_url, measure_results(tmp_path / "b", kernel_only, seed=1))
    assert not _rows(evaluate_pair(store_url, path, base, kernel_only))
    meter = commit_files(path, {"benchmarks/hot_slice.py": "ROUNDS = 1\n"}, "meter")
    ingest(store_url, measure_results(tmp_path / "c", meter, seed=2))
    (row,) = _rows(evaluate_pair(store_url, path, kernel_only, meter))
    assert row.decision == "error" and "do not say which meter" in row.reason


def test_a_meter_that_cannot_measure_the_head_says_why_in_an_error_row(store_url, tmp_path, repo):
    path, base = repo
    head = commit_files(path, {"kernels/walk.py": "SPEED = 4\n"}, "head")
    ingest(store_url, measure_results(tmp_path / "a", base, provenance=trees.ids(path, base)))
    problem = "the meter has no synthetic snapshot for task 'g1_run' (it knows g1_walk, g1_motion)"
    ids = {**trees.ids(path, head), "meter_commit": base, "problems": [problem]}
    ingest(store_url, measure_results(tmp_path / "b", head, seed=1, provenance=ids))
    e = evaluate_pair(store_url, path, base, head)
    (row,) = _rows(e)
    assert row.decision == "error" and "g1_run" in row.reason and e.verdict == "error"


def test_a_head_whose_subject_is_the_bases_is_judged_on_the_base_results(store_url, tmp_path, repo):
    path, base = repo
    ingest(store_url, measure_results(tmp_path / "a", base, provenance=trees.ids(path, base)))
    docs = commit_files(
        path, {"README.md": "more docs\n", "fusegate-policy.toml": POLICY + "\n"}, "docs only"
    )
    e = evaluate_pair(store_url, path, base, docs)
    assert e.verdict == "approve", e.reasons
    assert any("nothing measured again" in r for r in e.reasons)
    assert not [c for c in e.comparisons if c.kind == "head_vs_base"]  # the same results on both sides
    assert {c.kind for c in e.comparisons} >= {"impl_vs_baseline"}
    kernels = commit_files(path, {"kernels/walk.py": "SPEED = 5\n"}, "a kernel edit")
    e = evaluate_pair(store_url, path, base, kernels)
    assert e.verdict == "error" and not any("nothing measured again" in r for r in e.reasons)
