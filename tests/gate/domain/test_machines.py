"""What makes two machines one kind (``gate.domain.machines.machine_id``)."""

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
