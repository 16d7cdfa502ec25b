"""fusegate ingest: asv results + sidecar -> store, idempotent, all-or-nothing, errors that name file and field."""

from __future__ import annotations

import dataclasses
import json
import shutil

import numpy as np
import pytest
from sqlalchemy import func, select

from gate.domain.benchmarks import PAIRED, TIME
from gate.ingest import asv_dir, bundle
from gate.ingest.bundle import IngestError
from gate.store import db, queries
from gate.store.models import CellSummary, Result, Run
from tests.gate import asv_results
from tests.gate.builders import ingest

HEAD = "ab" * 20
BASE = "cd" * 20


def _write(root, commit=HEAD, *, machine="runner-1", failed=frozenset(), seed=0):
    rng = np.random.default_rng(seed)
    return asv_results.write(
        root,
        machine=machine,
        commit=commit,
        times=lambda cell: (
            None if cell["impl"] == "numpy" and cell["threads"] == 2 else rng.lognormal(-5, 0.05, 20)
        ),
        pairs=lambda cell: [rng.lognormal(0, 0.05, 40) for _ in range(2)],
        failed=failed,
    )


def _count(url, model):
    with db.transaction(url) as session:
        return session.scalar(select(func.count()).select_from(model))


def test_results_land_with_samples_placement_and_summaries(store_url, tmp_path):
    [report] = ingest(store_url, _write(tmp_path))
    assert report.stored == 1 and report.unchanged == 0
    with db.transaction(store_url) as session:
        rows = session.scalars(select(Result)).all()
        paired = [r for r in rows if r.benchmark == PAIRED]
        times = [r for r in rows if r.benchmark == TIME]
        # 2 tasks x 2 impls x 2 N x 2 threads paired cells, each with one sample list per process
        assert len(paired) == 16 and all(len(r.samples) == 2 and len(r.samples[0]) == 40 for r in paired)
        # numpy at 2 threads was skipped (NaN in asv): not a cell
        # asv concatenates its rounds; a fixed repeat splits them back into one group per process
        assert len(times) == 28 and all([len(g) for g in r.samples] == [10, 10] for r in times)
        [(_run, machine, sha, placement)] = queries.runs(session)
        assert (machine, sha) == ("runner-1", HEAD) and "cpus=" in placement
        cells = queries.summaries(session, commit_sha=HEAD)
        assert len(cells) == 44 and all(c.status == "ok" for _, _, _, c in cells)
        with pytest.raises(dataclasses.FrozenInstanceError):  # a view: an evaluation cannot change the store
            cells[0][3].center = 1.0


def test_the_same_files_twice_are_stored_once(store_url, tmp_path):
    results = _write(tmp_path)
    ingest(store_url, results)
    [again] = ingest(store_url, results)
    assert again.stored == 0 and again.unchanged == 1
    assert _count(store_url, Run) == 1 and _count(store_url, Result) == 44


def test_a_rewritten_result_file_replaces_the_run(store_url, tmp_path):
    ingest(store_url, _write(tmp_path, seed=0))
    shutil.rmtree(tmp_path / "fusegate")
    [report] = ingest(store_url, _write(tmp_path, seed=1))  # asv measured the commit again
    assert report.stored == 1
    assert _count(store_url, Run) == 1 and _count(store_url, Result) == 44


def test_a_failed_benchmark_is_kept_as_a_failure(store_url, tmp_path):
    failed = frozenset({("g1_walk", "assembled", 4096, 1)})
    ingest(store_url, _write(tmp_path, failed=failed))
    with db.transaction(store_url) as session:
        bad = session.scalars(select(CellSummary).where(CellSummary.status == "failed")).all()
        assert {(c.benchmark, c.task, c.impl, c.num_envs, c.threads) for c in bad} == {
            (TIME, "g1_walk", "assembled", 4096, 1),
            (PAIRED, "g1_walk", "assembled", 4096, 1),
        }


def _corrupt(results_dir, mutate):
    [path] = [p for p in (results_dir / "runner-1").glob("*.json") if p.name != "machine.json"]
    data = json.loads(path.read_text())
    mutate(data)
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize(
    ("mutate", "field", "says"),
    [
        (lambda d: d.pop("commit_hash"), "commit_hash", "missing"),
        (lambda d: d.update(commit_hash="HEAD"), "commit_hash", "40-digit"),
        (lambda d: d.update(version=1), "version", "expected asv results version 2"),
        (
            lambda d: d["results"][TIME].__setitem__(0, [1.0]),
            f"results.{TIME}.result",
            "expected 32",
        ),
        (lambda d: d.update(commit_hash="ef" * 20), "sidecar", "no fusegate sidecar record"),
        (lambda d: d.update(date=1e300), "date", "milliseconds since 1970"),
        (lambda d: d.update(result_columns=[["result"]]), "result_columns", "column names"),
        (lambda d: d["results"].update({PAIRED: "x"}), f"results.{PAIRED}", "list of columns"),
    ],
)
def test_a_malformed_file_is_rejected_naming_file_and_field(store_url, tmp_path, mutate, field, says):
    good = _write(tmp_path / "good", BASE)
    ingest(store_url, good)
    bad = _write(tmp_path / "bad", HEAD)
    path = _corrupt(bad, mutate)
    with pytest.raises(IngestError) as info:
        ingest(store_url, bad)
    assert info.value.file == str(path.relative_to(bad)) and info.value.field == field
    assert says in info.value.message
    assert _count(store_url, Run) == 1  # what was stored before is intact, nothing of the bad upload landed


def test_a_bundle_is_all_or_nothing(store_url, tmp_path):
    """Two result files, the second broken: neither is stored."""
    results = _write(tmp_path, HEAD)
    _write(tmp_path, BASE)
    _corrupt_second = sorted((results / "runner-1").glob(f"{BASE[:8]}*.json"))[0]
    data = json.loads(_corrupt_second.read_text())
    data["results"][TIME] = "oops"
    _corrupt_second.write_text(json.dumps(data))
    with pytest.raises(IngestError, match="expected a list of columns"):
        ingest(store_url, results)
    assert _count(store_url, Run) == 0


def test_mixed_placements_in_one_environment_are_refused(tmp_path):
    results = _write(tmp_path)
    [path] = (tmp_path / "fusegate" / HEAD[:8]).glob("*.jsonl")
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    lines[-1]["placement"] = {**lines[-1]["placement"], "asked": "cpus=0"}
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    [b] = asv_dir.read(results)
    with pytest.raises(IngestError, match="must not mix"):
        bundle.runs(b)


def test_a_missing_results_directory_says_what_to_pass(tmp_path):
    with pytest.raises(IngestError, match="not a directory"):
        asv_dir.read(tmp_path / "nope")


def test_a_paired_record_without_pairs_is_refused(tmp_path):
    results = _write(tmp_path)
    [path] = (tmp_path / "fusegate" / HEAD[:8]).glob("*.jsonl")
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    next(x for x in lines if x["kind"] == "paired")["pairs"] = []
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    [b] = asv_dir.read(results)
    with pytest.raises(IngestError, match="empty"):
        bundle.runs(b)


def test_a_directory_is_ingested_whole_or_not_at_all(store_url, tmp_path):
    """Two machines in one results directory, the second broken: the first is not stored either."""
    from gate.services.results import arrived_from_directory

    _write(tmp_path, machine="runner-1")
    results = _write(tmp_path, machine="runner-2")
    _corrupt_machine = next((results / "runner-2").glob("*-*.json"))
    data = json.loads(_corrupt_machine.read_text())
    data["version"] = 9
    _corrupt_machine.write_text(json.dumps(data))
    with pytest.raises(IngestError, match="version"):
        arrived_from_directory(store_url, repo=tmp_path, results=results)
    assert _count(store_url, Run) == 0


def test_a_summary_view_has_the_summary_tables_columns_in_order():
    """summaries() builds the view positionally from the table's columns: a new column must be added to both."""
    assert [f.name for f in dataclasses.fields(queries.SummaryView)] == [
        c.name for c in CellSummary.__table__.c
    ]


def test_two_placements_of_one_commit_are_two_machines_each_with_its_own_records(tmp_path):
    """A two-node machine measured at node 0 and interleaved: one results directory, one sidecar directory per
    commit, each record naming its asv machine; each placement's bundle has its own records (never mixed)."""
    path = tmp_path / "fusegate" / HEAD[:8] / "records.jsonl"
    for name, asked in (("runner-1__node0", "cpus=0-3 mem=bind:0"), ("runner-1__interleaved", "cpus=0-7")):
        results = _write(tmp_path, machine=name)
        lines = [json.loads(x) for x in path.read_text().splitlines()]
        for line in lines:
            if "asv_machine" not in line:
                line["asv_machine"] = name
                line["placement"] = {**line["placement"], "asked": asked}
        path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    bundles = {b.machine["machine"]: b for b in asv_dir.read(results)}
    assert set(bundles) == {"runner-1__node0", "runner-1__interleaved"}
    for name, b in bundles.items():
        assert b.sidecar and {r["asv_machine"] for r in b.sidecar} == {name}
        assert len(bundle.runs(b)) == 1  # one placement per bundle: not refused as mixed
    # a record that names no asv machine (asv run by hand) belongs to every machine of its commit, as before
    lines = [
        {k: v for k, v in json.loads(x).items() if k != "asv_machine"} for x in path.read_text().splitlines()
    ]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    with pytest.raises(IngestError, match="must not mix"):
        bundle.runs(asv_dir.read(results)[0])


def test_a_bundle_with_another_placements_records_is_refused(tmp_path):
    [b] = asv_dir.read(_write(tmp_path))
    b.sidecar[0]["asv_machine"] = "runner-1__interleaved"
    with pytest.raises(IngestError, match="records of runner-1__interleaved in the bundle of 'runner-1'"):
        bundle.runs(b)
