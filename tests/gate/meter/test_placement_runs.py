"""A machine's plan as asv runs (``gate.cli.placements``): one per placement, each under its own asv machine name
with the environment that applies it, the collector's suites at the first only; on fake topologies of machines
this one is not, and on this one."""

from __future__ import annotations

import json

import pytest

from gate.cli import measure as measuring
from gate.cli import placements
from gate.domain.machines import host_of, placement_machine
from gate.domain.selection import gate_bench_against
from gate.meter import topology


def _machine(tmp_path, sockets, cores, smt, nodes):
    root = topology.write_fake(
        tmp_path / "sys", sockets=sockets, cores_per_socket=cores, smt=smt, nodes=nodes
    )
    return topology.read(root)


def test_a_two_node_machine_is_measured_at_both_placements_under_their_own_names(tmp_path):
    t = _machine(tmp_path, 2, 40, 2, 2)  # the users' 2 x 80-thread Xeon
    node0, interleaved = placements.runs("xeon", profile="quick", topology=t, environ={}, best={})
    assert (node0.machine, node0.label, node0.first) == ("xeon__node0", "node0", True)
    assert (interleaved.machine, interleaved.label, interleaved.first) == (
        "xeon__interleaved",
        "interleaved",
        False,
    )
    assert node0.env["FUSEGATE_CPUS"] == topology.format_cpu_list(t.nodes[0])
    assert node0.env["FUSEGATE_MEMPOLICY"] == "bind:0"
    assert (
        interleaved.env["FUSEGATE_CPUS"] == "0-159"
        and interleaved.env["FUSEGATE_MEMPOLICY"] == "interleave:0,1"
    )
    assert node0.env["FUSEGATE_BENCH_THREADS"] == "8,16,32"  # 40 cores on the node, no table: 3 powers of two
    assert node0.asv_args() == ("--machine", "xeon__node0")
    assert node0.environment()["FUSEGATE_ASV_MACHINE"] == "xeon__node0"
    # around the best known count when the machine has a thread table
    best = placements.runs(
        "xeon", profile="quick", topology=t, environ={}, best={"node0": 24, "interleaved": 24}
    )
    assert best[0].env["FUSEGATE_BENCH_THREADS"] == "12,24,48"


def test_a_one_node_machine_is_measured_as_before_under_its_own_name(tmp_path):
    """This VM's case (and a 16-core desktop's): one placement, the processes keep their affinity and memory
    policy, no --machine; the plan sets the thread counts."""
    small = _machine(tmp_path / "a", 1, 2, 1, 1)
    [only] = placements.runs("vm", profile="quick", topology=small, environ={}, best={})
    assert (only.machine, only.label, only.first, only.asv_args()) == ("vm", "", True, ())
    assert "FUSEGATE_CPUS" not in only.env and "FUSEGATE_MEMPOLICY" not in only.env
    assert only.env["FUSEGATE_BENCH_THREADS"] == "1,2" and "FUSEGATE_ASV_MACHINE" not in only.environment()
    [ryzen] = placements.runs(
        "r", profile="quick", topology=_machine(tmp_path / "b", 1, 16, 2, 1), environ={}, best={}
    )
    assert ryzen.env["FUSEGATE_BENCH_THREADS"] == "4,8,16"


def test_what_the_operator_set_wins(tmp_path):
    t = _machine(tmp_path, 2, 40, 2, 2)
    # a placement named in the environment is the only one measured
    assert placements.runs("xeon", profile="quick", topology=t, environ={"FUSEGATE_CPUS": "0-39"}) == [
        placements.PlacementRun("xeon")
    ]
    # a FUSEGATE_BENCH_* setting is not overridden by the plan's
    runs = placements.runs(
        "xeon", profile="quick", topology=t, environ={"FUSEGATE_BENCH_THREADS": "1,40"}, best={}
    )
    assert all("FUSEGATE_BENCH_THREADS" not in r.env for r in runs)
    with pytest.raises(ValueError, match="asv machine --yes"):
        placements.runs(None, profile="quick", topology=t, environ={}, best={})


def test_the_second_placement_measures_no_collector_suite(tmp_path):
    t = _machine(tmp_path, 2, 40, 2, 2)
    first, second = placements.runs("xeon", profile="quick", topology=t, environ={}, best={})
    results = tmp_path / "results"
    for where, collector in ((first, True), (second, False)):
        calls = measuring._profile_calls(None, results, where, against=True)
        benches = [extra[extra.index("--bench") + 1] for extra, _, _ in calls]
        assert any("collector" in b for b in benches) is collector
        assert any("cost" in b for b in benches) and any("AgainstBase" in b for b in benches)
        assert all(extra[-2:] == ("--machine", where.machine) for extra, _, _ in calls)
        assert all(env["FUSEGATE_ASV_MACHINE"] == where.machine for _, _, env in calls)
        # the exact suites and the lockstep pass run once, the timed ones in their processes
        rounds = {extra[extra.index("--bench") + 1]: call.rounds for extra, call, _ in calls}
        assert rounds[gate_bench_against(collector=collector)] == 1


def test_placement_names_and_their_machine():
    assert placement_machine("xeon", "node0") == "xeon__node0"
    assert placement_machine("xeon", "") == "xeon"
    assert host_of("xeon__interleaved") == "xeon" and host_of("xeon__node1") == "xeon"
    assert host_of("my-host") == "my-host" and host_of("__node0") == "__node0"
    # a cluster's hostnames are machines of their own, not placements of one ("__": no hostname has "_")
    assert host_of("compute-node12") == "compute-node12"
    assert host_of("compute-node12__interleaved") == "compute-node12"
    with pytest.raises(ValueError, match="unknown placement label"):
        placement_machine("xeon", "socket0")


def test_placement_names_are_registered_with_asv_once(tmp_path, monkeypatch):
    machines = tmp_path / "asv-machine.json"
    machines.write_text(json.dumps({"xeon": {"machine": "xeon"}, "version": 1}))
    ran = []
    monkeypatch.setattr(placements.subprocess, "run", lambda args, **k: ran.append(args) or _Done())
    where = [placements.PlacementRun("xeon__node0", "node0"), placements.PlacementRun("xeon")]
    assert placements.register(where, machines) == ["xeon__node0"]
    assert ran[0][-4:] == ["machine", "--machine", "xeon__node0", "--yes"]
    machines.write_text(json.dumps({"xeon": {}, "xeon__node0": {}, "version": 1}))
    assert placements.register(where, machines) == []


class _Done:
    returncode = 0
    stdout = stderr = ""


def test_a_process_limited_to_some_cpus_plans_over_those(tmp_path):
    """A runner in a container with a cpuset (or under taskset) sees the host's sysfs: its plan covers the CPUs it
    may use, and a node it has none of is not a placement."""
    t = _machine(tmp_path, 2, 40, 2, 2)
    one_node = t.within(range(8))
    assert list(one_node.nodes) == [0] and one_node.cpus == tuple(range(8))
    [only] = placements.runs("xeon", profile="quick", topology=one_node, environ={}, best={})
    assert only.label == "" and only.env["FUSEGATE_BENCH_THREADS"] == "2,4,8"
    with pytest.raises(ValueError, match="none of the CPUs"):
        t.within([500])


def test_the_quick_counts_come_from_the_kernels_thread_table(tmp_path, monkeypatch):
    """On a machine of more than 4 cores the counts are around the table's most common count, the table the
    kernels load (another machine's table is ignored)."""
    from kernels import kernel

    table = tmp_path / "threads.json"
    monkeypatch.setenv("FUSEGATE_THREAD_TABLE", str(table))
    by_n = {"4096": 16, "32768": 32, "65536": 32}
    for machine, expected in ((kernel.machine_key(), 32), ("another CPU x160", None)):
        table.write_text(
            json.dumps(
                {
                    "format": kernel.THREAD_TABLE_FORMAT,
                    "machine": machine,
                    "table": {"g1_walk": {"assembled": by_n}},
                }
            )
        )
        kernel.thread_table.cache_clear()
        best = placements.best_from_table()
        assert best.get("node0") == expected and best.get("") == expected
        if expected:
            t = _machine(tmp_path / machine[:4], 2, 40, 2, 2)
            node0, _ = placements.runs("xeon", profile="quick", topology=t, environ={}, best=best)
            assert node0.env["FUSEGATE_BENCH_THREADS"] == "16,32,64"
    kernel.thread_table.cache_clear()
