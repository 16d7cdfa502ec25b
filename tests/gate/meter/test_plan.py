"""The benchmark plan from a machine's topology (``gate.meter.plan``), on fake sysfs trees of machines this one
is not, and on this one."""

from __future__ import annotations

import json

import pytest

from gate import cli
from gate.meter import plan, topology

MACHINES = {
    # name: (sockets, cores per socket, SMT, NUMA nodes)
    "xeon-2x80": (2, 40, 2, 2),  # the users' 2-socket Xeon: 160 hardware threads on 2 nodes
    "ryzen-16c": (1, 16, 2, 1),  # 16 cores / 32 threads, one node
    "epyc-8n": (2, 32, 2, 8),  # 128 threads on 8 nodes
}


@pytest.fixture(params=list(MACHINES))
def machine(request, tmp_path):
    sockets, cores, smt, nodes = MACHINES[request.param]
    root = topology.write_fake(
        tmp_path / request.param, sockets=sockets, cores_per_socket=cores, smt=smt, nodes=nodes
    )
    return request.param, topology.read(root)


def test_fake_topologies_read_back_as_built(machine):
    name, t = machine
    sockets, cores, smt, nodes = MACHINES[name]
    assert (len(t.nodes), t.sockets, t.physical_cores(), t.smt) == (nodes, sockets, sockets * cores, smt)
    assert len(t.cpus) == sockets * cores * smt and sorted(t.cpus) == list(range(len(t.cpus)))
    assert topology.Topology.from_dict(json.loads(json.dumps(t.to_dict()))) == t


def test_the_quick_plan_covers_both_placements_and_three_thread_counts_in_15_minutes(machine):
    name, t = machine
    p = plan.make(t, "quick")
    if len(t.nodes) > 1:
        assert [x.label for x in p.placements] == ["node0", "interleaved"]
        node0, every = p.placements
        assert node0.cpus == t.nodes[0] and node0.mem == "bind:0"
        assert every.cpus == t.cpus and every.mem.startswith("interleave:")
    else:
        assert [(x.label, x.mem) for x in p.placements] == [("", "default")]
    for x in p.placements:
        assert len(x.threads) == 3 and max(x.threads) <= t.physical_cores(
            x.cpus
        )  # powers of two up to the cores
        assert all(k & (k - 1) == 0 for k in x.threads)
    assert p.scales == (4096, 32768)
    assert p.estimated_s <= 15 * 60, (name, p.estimated_s)  # a head, with its lockstep pass
    assert plan.make(t, "quick", head=False).estimated_s < p.estimated_s


def test_a_known_best_thread_count_centres_the_ladder(machine):
    _, t = machine
    label = plan.make(t).placements[0].label
    p = plan.make(t, best={label: 24})
    assert p.placements[0].threads == (12, 24, 48) or max(p.placements[0].threads) == len(
        p.placements[0].cpus
    )


def test_the_full_plan_is_the_thread_curve(machine):
    _, t = machine
    p = plan.make(t, "full")
    for x in p.placements:
        assert x.threads[0] == 1 and x.threads[-1] == len(x.cpus)
    assert p.scales == tuple(2**k for k in range(11, 19))


def test_this_two_vcpu_machine_keeps_its_plan():
    """1 and 2 threads on one node, the quick profile's 26 timed cells, as before plans existed."""
    t = topology.Topology(nodes={0: (0, 1)}, cores={0: (0, 0), 1: (0, 1)})
    p = plan.make(t)
    (only,) = p.placements
    assert (only.threads, only.hot_rounds, only.paired_rounds) == ((1, 2), 6, 3)
    assert p.cells["hot_slice.HotSlice"] == 26 and p.cells["hot_slice.Paired"] == 8
    assert 4 * 60 <= p.estimated_s <= 7 * 60  # a head: 2 HotSlice processes per cell beside its lockstep pass


def test_fusegate_plan_prints_another_machines_plan(tmp_path, capsys):
    root = topology.write_fake(tmp_path / "xeon", sockets=2, cores_per_socket=40, smt=2, nodes=2)
    assert cli.main(["plan", "--topology", str(root), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [p["placement"] for p in out["placements"]] == ["node0", "interleaved"]
    assert out["placements"][0]["cpus"] == "0-39,80-119" and out["head_s"] <= 900
    assert cli.main(["plan", "--topology", str(tmp_path / "nothing.json")]) == 64
    assert "not a topology" in capsys.readouterr().err
