"""Placement parsing, applying (read back from the OS) and refusal; machine and software fingerprints.

Applying changes the process, so every apply runs in a fresh Python subprocess.
"""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from gate import domain
from gate.meter import fingerprint
from gate.meter.placement import (
    MemPolicy,
    Placement,
    PlacementError,
    format_cpu_list,
    numa_nodes,
    parse_cpu_list,
)
from gate.meter.subject import make_inputs


def test_cpu_lists_round_trip():
    assert parse_cpu_list("0-3,8,10-11") == (0, 1, 2, 3, 8, 10, 11)
    assert format_cpu_list((0, 1, 2, 3, 8, 10, 11)) == "0-3,8,10-11"
    assert parse_cpu_list(" 5 ") == (5,)


@pytest.mark.parametrize("bad", ["", "a", "3-1", "-2", "0-x"])
def test_bad_cpu_lists(bad):
    with pytest.raises(PlacementError, match="bad CPU list"):
        parse_cpu_list(bad)


def test_parse_string_and_environment_agree():
    text = Placement.parse("cpus=0-39 mem=bind:0 threads=16 layer=omp")
    env = Placement.from_env(
        {
            "FUSEGATE_CPUS": "0-39",
            "FUSEGATE_MEMPOLICY": "bind:0",
            "FUSEGATE_THREADS": "16",
            "FUSEGATE_THREADING_LAYER": "omp",
        }
    )
    assert text == env
    assert text.cpus == tuple(range(40))
    assert text.mem == MemPolicy(mode="bind", nodes=(0,))
    assert str(text) == "cpus=0-39 mem=bind:0 threads=16 layer=omp"
    assert Placement.parse(str(text)) == text
    assert str(Placement.from_env({})) == "inherit"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("cpu=0", "bad placement item 'cpu=0'"),
        ("threads=0", "threads must be a positive integer"),
        ("layer=gcd", "unknown threading layer 'gcd'"),
        ("mem=spread:0", "unknown memory policy 'spread'"),
        ("mem=bind", "needs NUMA nodes"),
        ("mem=local:0", "takes no nodes"),
        ("mem=preferred:0,1", "takes one node"),
    ],
)
def test_parse_errors(text, message):
    with pytest.raises(PlacementError, match=message):
        Placement.parse(text)


def _apply_in_subprocess(text: str) -> dict:
    code = (
        "import json, sys\n"
        "from gate.meter.placement import Placement, PlacementError\n"
        "try:\n"
        f"    print(json.dumps(Placement.parse({text!r}).apply().to_dict()))\n"
        "except PlacementError as e:\n"
        "    print(json.dumps({'error': str(e)}))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(result.stdout)


def _cpus() -> list[int]:
    return sorted(os.sched_getaffinity(0))


@pytest.mark.slow
def test_apply_changes_affinity_memory_policy_and_threads():
    cpu = _cpus()[-1]
    node = next(iter(numa_nodes()))
    granted = _apply_in_subprocess(f"cpus={cpu} mem=bind:{node} threads=1")["granted"]
    assert granted == {"cpus": str(cpu), "mem": f"bind:{node}", "threads": 1, "layer": granted["layer"]}
    granted = _apply_in_subprocess(f"mem=interleave:{node}")["granted"]
    assert granted["mem"] == f"interleave:{node}"
    assert granted["cpus"] == format_cpu_list(tuple(_cpus()))
    assert _apply_in_subprocess("mem=local")["granted"]["mem"] == "local"
    assert _apply_in_subprocess(f"mem=preferred:{node}")["granted"]["mem"] == f"preferred:{node}"


def test_apply_records_the_threading_layer():
    granted = _apply_in_subprocess("layer=workqueue")["granted"]
    assert granted["layer"] == "workqueue"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("cpus=4096", "CPUs 4096 are not available to this process"),
        ("mem=bind:63", "NUMA node(s) 63 do not exist here"),
        (f"threads={len(os.sched_getaffinity(0)) + 1}", "more than the"),
    ],
)
def test_impossible_placements_are_refused(text, message):
    assert message in _apply_in_subprocess(text)["error"]


def test_a_layer_is_granted_or_refused_never_swapped():
    """Asking for TBB gives TBB where it is installed and a clear error where it is not, never another layer."""
    result = _apply_in_subprocess("layer=tbb")
    if "error" in result:
        assert "could not start threading layer 'tbb'" in result["error"]
    else:
        assert result["granted"]["layer"] == "tbb"


def test_machine_fingerprint_fields():
    m = fingerprint.machine()
    for key in (
        "cpu_model",
        "cpu_flags",
        "logical_cpus",
        "physical_cores",
        "sockets",
        "numa_nodes",
        "caches",
    ):
        assert m[key], key
    assert m["ram_mb"] > 0
    assert sum(len(n["cpus"]) for n in m["numa_nodes"].values()) == m["logical_cpus"]
    assert any(c["level"] == 1 for c in m["caches"])
    assert domain.machine_id(m) == domain.machine_id(fingerprint.machine())
    other = {**m, "cpu_model": m["cpu_model"] + " (other)"}
    assert domain.machine_id(other) != domain.machine_id(m)


def test_software_fingerprint_fields():
    s = fingerprint.software("omp")
    for key in ("python", "numpy", "numba", "llvmlite", "mujoco"):
        assert s[key] and s[key] != "not installed", key
    assert s["threading_layer"] == "omp"
    assert s["valgrind"]  # a version, or "not installed": never missing from the record


def test_first_touch_at_random_offsets_copies_exactly_at_cache_line_offsets_that_vary():
    """The timing processes' layout randomisation: same values, C-contiguous, offsets in [0, 4096) that are
    multiples of 64 and differ between processes (here: between generators)."""
    from gate.meter import placement

    snap = make_inputs("g1_walk", 4096, seed=1)
    layouts = []
    for seed in (1, 2):
        out = placement.first_touch(snap, rng=np.random.default_rng(seed))
        for name, arr in out.items():
            assert arr.flags.c_contiguous and arr.dtype == snap[name].dtype
            np.testing.assert_array_equal(arr, snap[name])
            assert arr.ctypes.data % placement.LAYOUT_ALIGN == 0
        layouts.append([arr.ctypes.data % placement.LAYOUT_SPAN for arr in out.values()])
    assert layouts[0] != layouts[1]
    assert len(set(layouts[0])) > 1  # the arrays do not share one offset


FORKSERVER = """
import os, sys
import numba.np.ufunc.parallel as parallel
from gate.meter import placement
placement.prepare_fork()
if parallel._is_initialized:
    sys.exit("prepare_fork started a threading layer")
children = []
for _ in range(2):
    pid = os.fork()
    if pid == 0:
        placement.Placement.from_env({}).apply()  # starts the pool: a layer started before the fork aborts here
        os._exit(0)
    children.append(pid)
codes = [os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) for pid in children]
sys.exit(f"children exited {codes}" if any(codes) else 0)
"""


def test_a_process_prepared_to_fork_starts_no_threading_layer_and_its_children_start_theirs():
    """asv's forkserver calls ``prepare_fork`` before it forks the benchmark processes (benchmarks/_common.py)."""
    done = subprocess.run([sys.executable, "-c", FORKSERVER], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
