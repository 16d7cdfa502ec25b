"""The sidecar records' model at the boundary: every kind the gate reads, every field it checks, on records
built in memory (fresh values each run), each bad one refused naming the record and the field."""

from __future__ import annotations

import copy
import random

import pytest

from gate import sidecar
from gate.ingest import sidecar_records
from gate.ingest.checks import IngestError

rng = random.Random()


def _envelope(kind: str) -> dict:
    return {
        "format": sidecar.FORMAT,
        "kind": kind,
        "commit": f"{rng.getrandbits(160):040x}",
        "env": "existing-py3.11",
        "placement": {"granted": {"cpus": [0, 1]}, "asked": "auto"},
        "machine": {"cpu": "x86_64"},
        "software": {"numba": "0.60"},
    }


def _pair(collector: bool = False) -> dict:
    pair = {"base_s": rng.uniform(1e-4, 1e-2), "impl_s": rng.uniform(1e-4, 1e-2)}
    if collector:
        for side in ("base_us", "impl_us"):
            pair[side] = {"physics": rng.uniform(0, 900), "kernel": rng.uniform(0, 90), "rest": 0.0}
    return pair


def _cell() -> dict:
    return {"task": "g1_walk", "impl": "assembled", "num_envs": rng.choice([64, 4096]), "threads": 2}


def good(kind: str) -> dict:
    record = _envelope(kind)
    if kind in (sidecar.PAIRED, sidecar.AGAINST_BASE, sidecar.COLLECTOR_AGAINST_BASE):
        record |= _cell() | {"pairs": [_pair() for _ in range(rng.randint(1, 5))]}
    elif kind == sidecar.COLLECTOR_PAIRED:
        record |= _cell() | {"baseline": "handwritten", "pairs": [_pair(True) for _ in range(3)]}
    elif kind == sidecar.FAILURE:
        record |= _cell() | {"suite": "cost", "message": "ValueError: boom"}
    elif kind == sidecar.COST:
        record["cost"] = {"cells": [{**_cell(), "instructions": rng.uniform(1e5, 1e7)}]}
    return record


KINDS = (
    sidecar.PLACEMENT,
    sidecar.PAIRED,
    sidecar.AGAINST_BASE,
    sidecar.COLLECTOR_PAIRED,
    sidecar.COLLECTOR_AGAINST_BASE,
    sidecar.FAILURE,
    sidecar.COST,
)


@pytest.mark.parametrize("kind", KINDS)
def test_a_good_record_of_every_kind_passes_unchanged(kind):
    record = good(kind)
    before = copy.deepcopy(record)
    assert sidecar_records.by_commit([record]) == {record["commit"]: [before]}


def _set(path: str, value):
    def edit(record: dict) -> None:
        *parents, last = path.split("/")
        target = record
        for key in parents:
            target = target[int(key)] if key.isdigit() else target[key]
        if value is KeyError:
            del target[last]
        else:
            target[last] = value

    return edit


CASES = [
    (sidecar.PAIRED, "format", 2, "format", "expected sidecar format 1"),
    (sidecar.PAIRED, "commit", KeyError, "commit", "missing"),
    (sidecar.PAIRED, "placement/granted", KeyError, "placement.granted", "missing"),
    (sidecar.PAIRED, "machine", ["x"], "machine", "dictionary, got list ['x']"),
    (sidecar.PAIRED, "kind", ["paired"], "kind", "valid string, got list"),
    (sidecar.PAIRED, "kind", {"a": 1}, "kind", "valid string, got dict"),
    (sidecar.PAIRED, "commit", 5, "commit", "valid string, got int 5"),
    (sidecar.PAIRED, "machine/load", float("nan"), "machine.", "NaN"),
    (sidecar.PAIRED, "software/numba", "0.6\x00", "software.", "NUL"),
    (sidecar.PAIRED, "task", "", "task", "1-64 printable"),
    (sidecar.PAIRED, "impl", "a\nb", "impl", "1-64 printable"),
    (sidecar.PAIRED, "threads", 2**40, "threads", "1..2147483647"),
    (sidecar.PAIRED, "num_envs", True, "num_envs", "1..2147483647"),
    (sidecar.PAIRED, "num_envs", "64", "num_envs", "1..2147483647"),
    (sidecar.PAIRED, "pairs", [], "pairs", "empty"),
    (sidecar.PAIRED, "baseline", "", "baseline", "1-64 printable"),
    (sidecar.PAIRED, "pairs/0/base_s", -1.0, "pairs[0].base_s", "positive and finite"),
    (sidecar.PAIRED, "pairs/0/impl_s", float("inf"), "pairs[0].impl_s", "positive and finite"),
    (sidecar.AGAINST_BASE, "pairs/0/base_s", 5e-324, "pairs[0]", "finite positive ratio"),
    (sidecar.COLLECTOR_PAIRED, "baseline", "h" * 65, "baseline", "1-64 printable"),
    (sidecar.COLLECTOR_PAIRED, "pairs/0/base_us/kernel", -1.0, "pairs[0].base_us.kernel", ">= 0"),
    (sidecar.COLLECTOR_PAIRED, "pairs/0/impl_us/rest", KeyError, "pairs[0].impl_us.rest", "missing"),
    (sidecar.FAILURE, "suite", "hot", "suite", "hot_slice"),
    (sidecar.FAILURE, "message", "x" * (sidecar.MAX_MESSAGE + 1), "message", "at most"),
    (sidecar.FAILURE, "message", "bad \x00", "message", "NUL"),
    (sidecar.COST, "cost/cells/0/num_envs", 0, "cost.cells[0].num_envs", "1..2147483647"),
    (sidecar.COST, "cost/cells", {}, "cost.cells", "list"),
]


@pytest.mark.parametrize(("kind", "path", "value", "field", "says"), CASES)
def test_a_bad_field_is_refused_naming_record_and_field(kind, path, value, field, says):
    records = [good(sidecar.PLACEMENT), good(kind)]
    _set(path, value)(records[1])
    with pytest.raises(IngestError) as info:
        sidecar_records.by_commit(records)
    assert info.value.file == "sidecar[1]"
    assert info.value.field.startswith(field), info.value
    assert says in info.value.message, info.value


def test_the_baseline_the_pairs_were_timed_against_is_recorded_and_one_per_run():
    paired, collector = good(sidecar.PAIRED), good(sidecar.COLLECTOR_PAIRED)
    paired["baseline"] = "handwritten"
    assert sidecar_records.provenance_of([paired, collector], "f.json") == {"baseline": "handwritten"}
    assert sidecar_records.provenance_of([good(sidecar.PAIRED)], "f.json") == {}  # not recorded: not claimed
    paired["baseline"] = "numpy"
    with pytest.raises(IngestError, match="timed against handwritten, numpy") as info:
        sidecar_records.provenance_of([paired, collector], "f.json")
    assert (info.value.file, info.value.field) == ("f.json", "sidecar.baseline")


@pytest.mark.parametrize(
    ("kernels", "field", "says"),
    [
        (["g1_walk/handwritten"], "sidecar.provenance.kernels", "at most 64 kernels"),
        ({f"t/i{k}": "ab" * 8 for k in range(65)}, "sidecar.provenance.kernels", "at most 64 kernels"),
        ({"g1_walk": "ab" * 8}, "sidecar.provenance.kernels", "is not task/implementation"),
        ({"g1_walk/handwritten": "XYZ"}, "sidecar.provenance.kernels.g1_walk/handwritten", "8-64 hex digits"),
    ],
)
def test_each_kernel_s_id_is_recorded_and_checked(kernels, field, says):
    record = good(sidecar.PAIRED)
    record["provenance"] = {"kernels": {"g1_walk/handwritten": "ab" * 8}}
    assert sidecar_records.provenance_of([record], "f.json")["kernels"] == {"g1_walk/handwritten": "ab" * 8}
    record["provenance"] = {"kernels": kernels}
    with pytest.raises(IngestError) as info:
        sidecar_records.provenance_of([record], "f.json")
    assert (info.value.field, says in info.value.message) == (field, True), info.value
