"""The gate's vocabulary: what makes two machines one kind (``gate.domain.machines.machine_id``)."""

import pytest

from gate.domain.machines import machine_id
from gate.meter import fingerprint
from gate.meter.placement import numa_nodes


def test_machine_id_ignores_drifting_node_memory(tmp_path, monkeypatch):
    """Ballooned VMs report a node MemTotal that moves by 128 MB between processes: one machine, one id."""
    ids, recorded = set(), set()
    for mb in (7897, 8025, 8153):
        root = tmp_path / str(mb)
        for node in numa_nodes():
            (root / f"node{node}").mkdir(parents=True)
            (root / f"node{node}" / "meminfo").write_text(
                f"Node {node} MemTotal:       {mb * 1024} kB\nNode {node} MemFree: 1 kB\n"
            )
        monkeypatch.setattr(fingerprint, "_NODE_ROOT", root)
        m = fingerprint.machine()
        recorded.add(next(iter(m["numa_nodes"].values()))["memory_mb"])
        ids.add(machine_id(m))
    assert recorded == {7897, 8025, 8153}  # still on record
    assert len(ids) == 1
    m = fingerprint.machine()
    moved = {**m, "numa_nodes": {"0": {"cpus": [0], "memory_mb": 1}, "1": {"cpus": [1], "memory_mb": 1}}}
    assert machine_id(moved) != machine_id(m)  # CPUs moving between nodes still counts


def test_the_wire_schema_and_the_domain_record_of_a_comparison_agree():
    """One comparison record: the API's schema has the domain record's fields, with its types and enums."""
    import dataclasses
    import typing

    from gate.api.schemas import ComparisonOut, EvaluationOut
    from gate.domain.evaluations import ComparisonRecord, EvaluationRecord

    hints = typing.get_type_hints(ComparisonRecord)
    assert set(ComparisonOut.model_fields) == set(hints)
    for name, info in ComparisonOut.model_fields.items():
        assert info.annotation == hints[name], name
    wire = {f for f in EvaluationOut.model_fields}
    assert wire == {f.name for f in dataclasses.fields(EvaluationRecord)}
    assert (
        EvaluationOut.model_fields["verdict"].annotation is typing.get_type_hints(EvaluationRecord)["verdict"]
    )


def test_records_keep_enums_whatever_they_are_given():
    from gate.domain.evaluations import ComparisonRecord
    from gate.domain.vocabulary import Decision, Kind, Signal

    blank = dict.fromkeys(("ratio", "low", "high", "p_value", "q_value", "cost_ratio", "num_envs", "threads"))
    values = dict(
        machine="m", kind="head_vs_base", task="g1_walk", impl="a", baseline="b", detail="", margin=0.05
    )
    values |= dict(samples=0, groups=0, decision="pass", signal="cost", reason="", **blank)
    r = ComparisonRecord(**values)
    assert (r.kind, r.decision, r.signal) == (Kind.HEAD_VS_BASE, Decision.PASS, Signal.COST)
    with pytest.raises(ValueError, match="'sideways' is not a valid Decision"):
        ComparisonRecord(**{**values, "decision": "sideways"})
