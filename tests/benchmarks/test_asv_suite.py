"""The asv suite as asv itself sees it: discovery, expected names and params, pins, the sidecar."""

import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import kernels
from gate.meter.subject import make_inputs

ROOT = Path(__file__).resolve().parents[2]
EXPECTED = {
    "hot_slice.HotSlice.time_update_state": "time",
    "hot_slice.HotSliceMetrics.track_time_vs_copy": "track",
    "hot_slice.HotSliceMetrics.track_cpu_util": "track",
    "hot_slice.JIT.track_compile_s": "track",
    "hot_slice.JIT.track_cache_load_s": "track",
    "hot_slice.Paired.track_ratio": "track",
    **{
        f"cost.{cls}.track_{metric}": "track"
        for cls in ("Cost", "CollectorCost")
        for metric in ("instructions", "l1_misses", "ll_misses", "estimated_cycles")
    },
    "collector.CollectorCheck.track_reward_max_diff": "track",
    "collector.CollectorPaired.track_ratio": "track",
    "hot_slice.AgainstBase.track_ratio": "track",
    "collector.CollectorAgainstBase.track_ratio": "track",
    **{
        f"collector.Collector.track_{name}": "track"
        for name in (
            "step_ms",
            "us_per_env_step",
            "overhead_us",
            "cpu_util",
            "physics_us",
            "getters_us",
            "update_state_us",
            "reset_us",
            "action_us",
            "replay_us",
            "other_us",
        )
    },
}


def _asv(*args: str, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "asv", *args], cwd=cwd, capture_output=True, text=True, env=env, timeout=600
    )


def _discover(tmp: Path, **extra_env: str) -> dict:
    """benchmarks.json from asv's own discovery, run against this interpreter (results in a temp dir)."""
    tmp.mkdir(parents=True, exist_ok=True)
    conf = json.loads((ROOT / "asv.conf.json").read_text())
    conf.update(results_dir=str(tmp / "results"), html_dir=str(tmp / "html"), env_dir=str(tmp / "env"))
    conf["benchmark_dir"] = str(ROOT / "benchmarks")
    config = tmp / "asv.conf.json"
    config.write_text(json.dumps(conf))
    env = {k: v for k, v in os.environ.items() if not k.startswith("FUSEGATE_BENCH")}
    env.update(HOME=str(tmp), **extra_env)  # asv keeps machine.json in $HOME
    machine = _asv("machine", "--yes", "--config", str(config), cwd=tmp, env=env)
    assert machine.returncode == 0, machine.stderr
    run = _asv(
        "run",
        "--config",
        str(config),
        "--bench",
        "just-discover",
        "-E",
        f"existing:{sys.executable}",
        cwd=tmp,
        env=env,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    return json.loads((tmp / "results" / "benchmarks.json").read_text())


@pytest.fixture(scope="module")
def discovered(tmp_path_factory) -> dict:
    return _discover(tmp_path_factory.mktemp("asv"), FUSEGATE_BENCH_TRACKS="1")


def test_quick_profile_runs_timings_the_gates_paired_ratios_the_collector_and_the_cost(tmp_path):
    """Single-value metric tracks are noise to asv's factor-only rule; by default continuous leaves them out.
    The cost tracks are exact, and the collector's check and paired ratio are the gate's, so the quick profile
    keeps them; they are what ``fusegate run`` selects (``gate_asv_runs``)."""
    import re

    from gate.domain import GATE_BENCH_AGAINST, GATE_BENCH_EXACT, gate_asv_runs

    found = {name for name in _discover(tmp_path, FUSEGATE_BENCH_GATE="1") if name != "version"}
    cost = {
        "cost.Cost.track_instructions",
        "cost.CollectorCost.track_instructions",
    }  # the sidecar has the rest
    collector = {"collector.CollectorCheck.track_reward_max_diff", "collector.CollectorPaired.track_ratio"}
    # the lockstep passes of a head against its base (skipped without a base tree: fusegate gate --measure)
    against = {"hot_slice.AgainstBase.track_ratio", "collector.CollectorAgainstBase.track_ratio"}
    assert found == {
        "hot_slice.HotSlice.time_update_state",
        "hot_slice.Paired.track_ratio",
        *cost,
        *collector,
        *against,
    }
    selected = [args[args.index("--bench") + 1] for args in gate_asv_runs(3)] + [GATE_BENCH_AGAINST]
    assert {name for name in found if any(re.search(regex, name) for regex in selected)} == found
    exact = {name for name in found if re.search(GATE_BENCH_EXACT, name)}
    assert exact == {*cost, "collector.CollectorCheck.track_reward_max_diff"}  # one measurement per commit


def test_asv_alone_gets_one_sample_per_process_and_no_single_value_ratios(tmp_path):
    """asv continuous takes every sample as independent and a track by its factor: run by asv alone, a HotSlice
    process gives one sample (the mean of its calls over 0.1 s) and a cell more processes, and the paired
    ratios (single values per process) are not offered to its rule; run by fusegate, five samples per process."""
    alone = _discover(tmp_path / "alone")
    gate = _discover(tmp_path / "gate", FUSEGATE_BENCH_GATE="1")
    assert (
        "hot_slice.Paired.track_ratio" not in alone and "collector.CollectorPaired.track_ratio" not in alone
    )
    assert "hot_slice.Paired.track_ratio" in gate and "collector.CollectorPaired.track_ratio" in gate
    hot, gated = alone["hot_slice.HotSlice.time_update_state"], gate["hot_slice.HotSlice.time_update_state"]
    assert (hot["repeat"], hot["rounds"], hot["sample_time"]) == (1, 8, 0.1)
    assert (gated["repeat"], gated["rounds"], gated["sample_time"]) == (5, 6, 0.01)
    chosen = _discover(tmp_path / "chosen", FUSEGATE_BENCH_HOT_ROUNDS="3")
    assert chosen["hot_slice.HotSlice.time_update_state"]["rounds"] == 3  # an explicit count wins


def test_every_benchmark_is_discovered_with_its_kind(discovered):
    found = {name: meta["type"] for name, meta in discovered.items() if name != "version"}
    assert found == EXPECTED  # a misnamed or broken benchmark would be missing here


def test_grids_cover_every_task_and_implementation(discovered):
    hot = discovered["hot_slice.HotSlice.time_update_state"]
    assert hot["param_names"] == ["task", "impl", "num_envs", "threads"]
    assert hot["params"][0] == [repr(t) for t in kernels.TASKS]
    assert hot["params"][1] == [repr(i) for i in kernels.IMPLS]
    paired = discovered["hot_slice.Paired.track_ratio"]
    assert "'handwritten'" not in paired["params"][1] and "'assembled'" in paired["params"][1]
    assert discovered["hot_slice.Paired.track_ratio"]["unit"] == "ratio"
    cost = discovered["cost.Cost.track_instructions"]
    assert cost["param_names"] == ["task", "impl", "num_envs", "threads"] and cost["params"][3] == ["1"]
    assert cost["params"][1] == [repr(i) for i in kernels.IMPLS] and cost["unit"] == "instructions"
    for name in ("collector.CollectorCheck.track_reward_max_diff", "cost.CollectorCost.track_instructions"):
        meta = discovered[name]
        assert meta["param_names"] == ["task", "impl", "num_envs", "threads"]
        assert meta["params"][2:] == [["64"], ["1"]]
    assert discovered["collector.CollectorCheck.track_reward_max_diff"]["params"][1] == [
        repr(i) for i in kernels.IMPLS
    ]
    # the reference's collector is checked (it is what the others follow) but its step's cost judges nothing
    assert discovered["cost.CollectorCost.track_instructions"]["params"][1] == [
        repr(i) for i in kernels.IMPLS if i != "numpy"
    ]
    paired = discovered["collector.CollectorPaired.track_ratio"]
    assert paired["params"][1] == ["'assembled'"] and paired["unit"] == "ratio"  # what the policy compares
    assert discovered["hot_slice.Paired.track_ratio"]["params"][1] == ["'assembled'"]
    collector = discovered["collector.Collector.track_update_state_us"]
    assert collector["param_names"] == ["task", "impl", "num_envs"]
    assert collector["params"][1] == [repr(i) for i in kernels.IMPLS] and collector["unit"] == "us"


@pytest.mark.slow
def test_collector_suite_measures_every_case_and_writes_the_sidecar():
    """The collector suite's one measuring process, shrunk to a few envs and steps, under a placement."""
    code = (
        "from benchmarks import collector\n"
        "collector.NUM_ENVS, collector.STEPS, collector.WARMUP = [4], 2, 1\n"
        "reports = collector._measure()\n"
        "b = collector.Collector()\n"
        "b.setup(reports, 'g1_motion', 'assembled', 4)\n"
        "print(len(reports), b.track_update_state_us(reports, 'g1_motion', 'assembled', 4))\n"
    )
    env = {**os.environ, "ASV_COMMIT": "c011ec70" * 5, "FUSEGATE_THREADS": "1", "FUSEGATE_BENCH_TRACKS": "1"}
    sidecar = ROOT / ".asv" / "fusegate" / "c011ec70" / "collector.jsonl"
    sidecar.unlink(missing_ok=True)
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    )
    cases, update_us = out.stdout.split()
    lines = [json.loads(line) for line in sidecar.read_text().splitlines()]
    sidecar.unlink()
    assert int(cases) == 8 and float(update_us) > 0
    reports = [line["report"] for line in lines if line["kind"] == "collector"]
    assert {(r["task"], r["impl"]) for r in reports} == {
        (task, impl) for task in kernels.TASKS for impl in kernels.registry.available(task)
    }
    assert all(r["threads"] == 1 and r["num_envs"] == 4 for r in reports)


@pytest.mark.slow
def test_the_gates_collector_cells_check_rollouts_and_pair_steps_and_name_a_broken_collector():
    """CollectorCheck's one process (the quick grid) and a CollectorPaired process, one collector made to raise."""
    code = (
        "from benchmarks import collector\n"
        "from gate.meter import trajectory\n"
        "real = trajectory.Collector\n"
        "def broken(task, impl, **kw):\n"
        "    if (task, impl) == ('g1_motion', 'assembled'):\n"
        "        raise ValueError('the snapshot has no phase buffer')\n"
        "    return real(task, impl, **kw)\n"
        "trajectory.Collector = broken\n"
        "collector.PAIRS = 3\n"
        "checks = collector._check_all()\n"
        "b = collector.CollectorPaired()\n"
        "b.setup('g1_walk', 'assembled', 64, 1)\n"
        "print(len(checks), sum(c['ok'] for c in checks.values()), b.track_ratio('g1_walk', 'assembled', 64, 1))\n"
    )
    env = {**os.environ, "ASV_COMMIT": "c0ffee00" * 5, "FUSEGATE_THREADS": "1", "FUSEGATE_BENCH_GATE": "1"}
    sidecar = ROOT / ".asv" / "fusegate" / "c0ffee00"
    for path in sidecar.glob("*.jsonl"):
        path.unlink()
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    )
    checked, ok, ratio = out.stdout.split()
    records = {
        p.stem: [json.loads(line) for line in p.read_text().splitlines()] for p in sidecar.glob("*.jsonl")
    }
    for path in sidecar.glob("*.jsonl"):
        path.unlink()
    assert (int(checked), int(ok)) == (8, 7) and 0.5 < float(ratio) < 2
    (failure,) = records["failure"]
    assert (failure["suite"], failure["task"], failure["impl"], failure["num_envs"]) == (
        "collector",
        "g1_motion",
        "assembled",
        64,
    )
    assert (
        "Collector('g1_motion', 'assembled'" in failure["message"] and "no phase buffer" in failure["message"]
    )
    assert failure["message"].endswith(
        "reproduce: fusegate collect --check --task g1_motion --impl assembled --num-envs 64 --threads 1 --steps 16"
    )
    resets = [c["resets"] for r in records["collector_check"] for c in r["checks"] if c["ok"]]
    assert len(resets) == 7 and min(resets) > 0  # the rollouts reach episodes that ended
    (paired,) = records["collector_paired"]
    assert len(paired["pairs"]) == 3 and paired["block"] == 2
    for pair in paired["pairs"]:
        assert pair["base_s"] > 0 and pair["impl_s"] > 0
        assert pair["impl_us"]["physics"] > pair["impl_us"]["kernel"] > 0 and pair["base_us"]["rest"] > 0


# What the gate service needs and the benchmark processes never import (they import kernels only).
GATE_ONLY = {
    "asv",
    "virtualenv",
    "scipy",
    "sqlalchemy",
    "alembic",
    "psycopg[binary]",
    "fastapi-offline",
    "fastapi",
    "uvicorn",
    "pydantic",
    "pydantic-settings",
    "httpx",
    "pyjwt",
    "cryptography",
    "jinja2",
    "plotly",
    "ruptures",
}


def test_asv_environment_pins_match_the_package():
    conf = json.loads((ROOT / "asv.conf.json").read_text())
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    pins = dict(dep.split("==") for dep in project["dependencies"])
    runtime = {name: version for name, version in pins.items() if name not in GATE_ONLY}
    assert conf["matrix"]["req"] == runtime
    assert "--no-deps" in conf["build_command"][0] and "--no-deps" in conf["install_command"][0]


@pytest.mark.slow
def test_suite_runs_once_and_writes_the_sidecar(tmp_path):
    """One cheap benchmark through asv_runner's own code path, under a placement, leaves a traceable sidecar."""
    code = (
        "from benchmarks import hot_slice\n"
        "b = hot_slice.Paired()\n"
        "b.setup({}, 'g1_walk', 'assembled', 64, 1)\n"
        "print(b.track_ratio({}, 'g1_walk', 'assembled', 64, 1))\n"
        "b.teardown({}, 'g1_walk', 'assembled', 64, 1)\n"
    )
    env = {**os.environ, "ASV_COMMIT": "feedface" * 5, "FUSEGATE_MEMPOLICY": "local", "FUSEGATE_THREADS": "1"}
    env["FUSEGATE_BENCH_TRACKS"] = "1"
    sidecar = ROOT / ".asv" / "fusegate" / "feedface" / "paired.jsonl"
    processes = sidecar.with_name("processes")
    sidecar.unlink(missing_ok=True)
    shutil.rmtree(processes, ignore_errors=True)
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    )
    ratio = float(out.stdout)
    line = json.loads(sidecar.read_text().splitlines()[-1])
    (record,) = processes.glob("*.json")
    process = json.loads(record.read_text())
    sidecar.unlink()
    shutil.rmtree(processes)
    # where the process's time went (rewritten at each teardown): start-up, imports, snapshot and load
    assert (process["benchmark"], process["impl"], process["num_envs"]) == ("Paired", "assembled", 64)
    assert set(process["phases"]) == {"snapshot", "load"}  # parity is the setup_cache's, once per commit
    spent = process["startup_s"] + process["import_s"] + sum(process["phases"].values())
    assert process["startup_s"] >= 0 and 0 < spent < process["age_s"]
    assert line["placement"]["asked"] == "mem=local threads=1"
    assert line["placement"]["granted"]["mem"] == "local" and line["placement"]["granted"]["threads"] == 1
    assert line["machine"]["cpu_model"] and line["software"]["numba"]
    assert len(line["pairs"]) >= 40 and line["median_ratio"] == pytest.approx(ratio)


def test_the_sidecar_finds_the_commit_where_asv_records_it(tmp_path, monkeypatch):
    """asv 0.6 passes no ASV_COMMIT to benchmark processes; the environment it built records the commit."""
    from benchmarks import _common

    monkeypatch.delenv("ASV_COMMIT", raising=False)
    monkeypatch.setattr(sys, "prefix", str(tmp_path))
    assert _common.measured_commit() == "working-tree"
    (tmp_path / "asv-install-status.json").write_text(json.dumps({"commit_hash": "ab" * 20, "version": 1}))
    assert _common.measured_commit() == "ab" * 20
    monkeypatch.setenv("ASV_COMMIT", "cd" * 20)  # set by a driver such as `fusegate run` (-E existing)
    assert _common.measured_commit() == "cd" * 20


def test_the_cost_suite_reads_one_measurement_and_fails_loudly_without_valgrind(monkeypatch):
    from benchmarks import cost as suite

    monkeypatch.setenv("FUSEGATE_VALGRIND", "/nonexistent/valgrind")
    costs = suite.Cost.setup_cache()
    assert suite.CollectorCost.setup_cache is suite.Cost.setup_cache  # one cost pass serves both
    assert "apt-get install valgrind" in costs["error"]
    bench = suite.Cost()
    with pytest.raises(RuntimeError, match="apt-get install valgrind"):
        bench.setup(costs, "g1_walk", "handwritten", 4096, 1)
    cell = {
        "instructions": 8.3e6,
        "l1_misses": 1.6e5,
        "ll_misses": 1.5e5,
        "estimated_cycles": 1.9e7,
        "error": "",
        "kind": "update_state",
    }
    measured = {
        ("update_state", "g1_walk", "handwritten", 4096): cell,
        ("update_state", "g1_walk", "assembled", 4096): {**cell, "error": "boom"},
        ("collector", "g1_walk", "handwritten", 64): {
            **cell,
            "kind": "collector",
            "instructions": 8.3e6 * 64,
        },
    }
    bench.setup(measured, "g1_walk", "handwritten", 4096, 1)
    args = (measured, "g1_walk", "handwritten", 4096, 1)
    assert bench.track_instructions(*args) == 8.3e6
    assert not hasattr(bench, "track_l1_misses")  # quick profile: the gate reads the others from the sidecar
    with pytest.raises(NotImplementedError, match="not in the profile's cost pass"):
        bench.setup(measured, "g1_walk", "numpy", 32768, 1)
    with pytest.raises(RuntimeError, match="boom"):
        bench.setup(measured, "g1_walk", "assembled", 4096, 1)
    step = suite.CollectorCost()
    step.setup(measured, "g1_walk", "handwritten", 64, 1)
    assert step.track_instructions(measured, "g1_walk", "handwritten", 64, 1) == 8.3e6 * 64


def test_snapshots_are_made_once_and_loaded_whole(tmp_path, monkeypatch):
    import numpy as np

    from benchmarks import _common

    monkeypatch.setattr(_common, "ROOT", tmp_path)
    made = _common.synthetic("g1_walk", 64)
    saved = list(tmp_path.rglob("g1_walk-64.npz"))
    assert len(saved) == 1 and not list(tmp_path.rglob("*.[0-9]*.npz"))  # no partial file left behind
    loaded = _common.synthetic("g1_walk", 64)
    fresh = make_inputs("g1_walk", 64, seed=0)
    assert set(made) == set(loaded) == set(fresh)
    for name in fresh:
        np.testing.assert_array_equal(loaded[name], fresh[name])
        assert loaded[name].dtype == fresh[name].dtype
    saved[0].write_bytes(b"torn")  # a killed writer's leftover is made again, not trusted
    np.testing.assert_array_equal(_common.synthetic("g1_walk", 64)["qpos"], fresh["qpos"])


def test_the_parity_check_runs_once_and_a_failing_cell_fails_its_timing_processes(monkeypatch):
    """``check_parity`` (the timed suites' setup_cache) names a cell that fails; its processes raise that
    message without loading anything, and the failure is in the sidecar once, for the gate's row."""
    import numpy as np

    from benchmarks import _common
    from kernels.tasks.g1_walk import reference as g1_walk

    monkeypatch.setenv("FUSEGATE_REUSE", "0")  # the reference is patched below, its sources are not
    monkeypatch.setattr(_common, "TASKS", ["g1_walk"])
    monkeypatch.setattr(_common, "NUM_ENVS", [64])
    monkeypatch.setattr(_common, "THREADS", [1])
    failures = []
    monkeypatch.setattr(_common, "write_sidecar", lambda kind, record: failures.append((kind, record)))
    monkeypatch.setattr(_common, "synthetic", lambda task, n: make_inputs(task, n, seed=0))
    assert set(_common.check_parity().values()) == {""}
    assert failures == []
    monkeypatch.setitem(g1_walk.REWARD_TERMS, "pose", lambda s, p: np.zeros(s.q.shape[0]))
    checked = _common.check_parity()
    message = checked[("g1_walk", "assembled", 64, 1)]
    assert "fails parity with the reference: reward" in message
    assert [r["impl"] for kind, r in failures if kind == "failure"] == [
        "handwritten",
        "assembled",
        "assembled_generic",
    ]
    with pytest.raises(RuntimeError, match="fails parity"):
        _common.checked_kernel("g1_walk", "assembled", 64, 1, {}, checked)


def test_hot_slice_setup_builds_once_per_process_though_asv_repeats_it(monkeypatch):
    """asv_runner calls setup before every sample of a timing benchmark; the snapshot and kernel are reused."""
    from benchmarks import _common, hot_slice

    monkeypatch.setattr(_common, "record_process", lambda *a: None)
    built = []
    real = _common.snapshot
    monkeypatch.setattr(_common, "snapshot", lambda *a: built.append(a) or real(*a))
    bench = hot_slice.HotSlice()
    bench.setup({}, "g1_walk", "handwritten", 64, 1)
    first = bench.kernel
    bench.setup({}, "g1_walk", "handwritten", 64, 1)
    assert bench.kernel is first and len(built) == 1
    bench.time_update_state({}, "g1_walk", "handwritten", 64, 1)


def test_the_suites_import_nothing_asvs_environments_lack():
    """asv imports every module of benchmarks/ in an environment with asv.conf.json's matrix only (NumPy,
    Numba, MuJoCo, ...) and the project without its dependencies: a module-level import of the gate's service
    (pydantic, SQLAlchemy) fails discovery there. The meter (``gate.meter``) and the sidecar records
    (``gate.sidecar``) are the gate's parts the suites may import, and importing them pulls in none of it."""
    import ast

    conf = json.loads((ROOT / "asv.conf.json").read_text())
    allowed = {"benchmarks", "kernels", "numpy", "numba", "mujoco", "rich", "threadpoolctl", "asv_runner"}
    allowed |= set(sys.stdlib_module_names) | {name.replace("-", "_") for name in conf["matrix"]["req"]}
    for path in sorted((ROOT / "benchmarks").glob("*.py")):
        for node in ast.parse(path.read_text()).body:  # module level only; a function may import what it uses
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module]
            for name in names:
                meter = name in ("gate", "gate.meter", "gate.sidecar") or name.startswith("gate.meter.")
                assert name.split(".")[0] in allowed or meter, f"{path.name} imports {name} at module level"
    meter = sorted(
        ".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        for p in (ROOT / "gate" / "meter").rglob("*.py")
        if p.name != "worker.py"  # the cost worker's import of kernels is timed; it imports nothing else
    )
    code = f"import sys\nfor m in {[*meter, 'gate.sidecar']!r}: __import__(m)\n" + (
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'pydantic', 'sqlalchemy', 'fastapi', 'alembic'}))"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]", done.stdout


def test_exact_results_are_reused_for_the_same_inputs_and_nothing_else(tmp_path, monkeypatch):
    """``_common.reusable``: the cost pass and the parity check of identical sources and software are computed
    once per machine; a reused result replays (this commit's sidecar records); a refused one is not kept."""
    from benchmarks import _common

    monkeypatch.setenv("FUSEGATE_CACHE_DIR", str(tmp_path))
    calls, replayed = [], []

    def compute():
        calls.append(1)
        return {"value": len(calls)}

    assert _common.reusable("t", {"cells": [1]}, compute, replay=replayed.append) == ({"value": 1}, False)
    assert _common.reusable("t", {"cells": [1]}, compute, replay=replayed.append) == ({"value": 1}, True)
    assert replayed == [{"value": 1}] and len(calls) == 1
    assert _common.reusable("t", {"cells": [2]}, compute) == ({"value": 2}, False)  # other inputs
    assert _common.reusable("u", {}, compute, keep=lambda r: False) == ({"value": 3}, False)
    assert _common.reusable("u", {}, compute) == ({"value": 4}, False)  # the refused one was not kept
    monkeypatch.setenv("FUSEGATE_REUSE", "0")
    assert _common.reusable("t", {"cells": [1]}, compute) == ({"value": 5}, False)
    assert not list(tmp_path.rglob("*.tmp"))
    monkeypatch.delenv("FUSEGATE_REUSE")
    monkeypatch.setattr(_common, "ROOT", tmp_path / "another-checkout")  # kernels imported from elsewhere
    assert _common.reusable("t", {"cells": [1]}, compute) == ({"value": 6}, False)
    assert _common.reusable("v", {}, compute) == ({"value": 7}, False)
    assert _common.reusable("v", {}, compute) == ({"value": 8}, False)  # nothing stored under this tree's key


def _fake_duet(monkeypatch, ratio) -> list[str]:
    """``gate.meter.duet.Duet`` replaced by worker pairs whose head/base is ``ratio(impl, k)`` the k-th time an
    implementation is timed; returns the implementations timed, in order."""
    from gate.meter import duet

    calls: list[str] = []

    class FakeDuet:
        def __init__(self, head, base, pythons=None):
            self.sides = {}

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            pass

        def pairs(self, cell, count):
            k = calls.count(cell.impl)
            calls.append(cell.impl)
            return [duet.Pair(head_s=ratio(cell.impl, k) * 1e-3, base_s=1e-3, first="head")] * count

    monkeypatch.setattr(duet, "Duet", FakeDuet)
    return calls


def test_the_lockstep_pass_gives_more_worker_pairs_to_the_cells_time_questions_only(monkeypatch):
    """DUET_ROUNDS worker pairs over every cell, then DUET_MORE more over the cells whose median head/base is
    above 1 + head_vs_base_margin; a cell whose further groups bring it back under stops getting more."""
    from benchmarks import _common
    from gate.meter import duet

    # head/base per cell and worker pair: slow stays 2x; straddle is 1.2x in its first two, then 1.0
    ratio = {"slow": lambda k: 2.0, "straddle": lambda k: 1.2 if k < 2 else 1.0, "same": lambda k: 1.0}
    _fake_duet(monkeypatch, lambda impl, k: ratio[impl](k))
    records = []
    monkeypatch.setattr(_common, "write_sidecar", lambda kind, record: records.append((kind, record)))
    monkeypatch.setattr(_common, "place", lambda: None)
    monkeypatch.setattr(_common, "AGAINST", "/base")
    monkeypatch.setattr(_common, "DUET_CELLS", None)
    monkeypatch.setattr(_common, "DUET_ROUNDS", 3)
    monkeypatch.setattr(_common, "DUET_MORE", 3)
    cells = [duet.Cell(task="g1_walk", impl=name, num_envs=64, threads=2) for name in ratio]
    found = _common.duet_pass("against_base", cells, pairs=4)
    groups = {name: sum(r["impl"] == name for _, r in records) for name in ratio}
    # straddle's medians: 1.2 (of 1.2, 1.2, 1.0), 1.1 (and 1.0): more; 1.0 (and 1.0): done
    assert groups == {"slow": 6, "straddle": 5, "same": 3}
    assert found[("g1_walk", "slow", 64, 2)] == pytest.approx(2.0)
    assert all(kind == "against_base" and len(r["pairs"]) == 4 for kind, r in records)
    monkeypatch.setattr(_common, "DUET_MORE", 0)
    records.clear()
    _common.duet_pass("against_base", cells, pairs=4)
    assert len(records) == 9


@pytest.mark.parametrize("trusted", [True, False])
def test_the_lockstep_pass_skips_the_kernels_whose_sources_are_the_base_s(monkeypatch, trusted):
    """A kernel with the same id in head and base tree runs the same code: not timed, unless the policy's
    ``same_sources_pass`` is false."""
    from benchmarks import _common
    from gate.meter import duet

    timed = _fake_duet(monkeypatch, lambda impl, k: 1.0)
    ids = {
        _common.ROOT: {"t/same": "a" * 16, "t/edited": "b" * 16, "t/new": "c" * 16},
        Path("/base"): {"t/same": "a" * 16, "t/edited": "d" * 16},
    }
    monkeypatch.setattr(_common, "write_sidecar", lambda kind, record: None)
    monkeypatch.setattr(_common, "place", lambda: None)
    monkeypatch.setattr(_common, "kernel_ids", lambda root: ids[Path(root)])
    monkeypatch.setattr(
        _common, "policy_value", lambda key, default: trusted if key == "same_sources_pass" else default
    )
    monkeypatch.setattr(_common, "AGAINST", "/base")
    monkeypatch.setattr(_common, "DUET_CELLS", None)
    monkeypatch.setattr(_common, "DUET_ROUNDS", 1)
    monkeypatch.setattr(_common, "DUET_MORE", 0)
    cells = [duet.Cell(task="t", impl=name, num_envs=64, threads=2) for name in ("same", "edited", "new")]
    found = _common.duet_pass("against_base", cells, pairs=2)
    expected = {"edited", "new"} | ({"same"} if not trusted else set())
    assert set(timed) == expected and {impl for _, impl, _, _ in found} == expected


def test_the_cost_pass_measures_only_the_kernels_whose_sources_changed(monkeypatch, tmp_path):
    """Each implementation's cells are stored under its own id; a pass measures the cells no stored result has,
    in one measurement, and keeps none that erred."""
    from benchmarks import cost as suite

    monkeypatch.setenv("FUSEGATE_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(suite.common, "write_sidecar", lambda kind, record: written.append(record["cost"]))
    monkeypatch.setattr(suite.common, "write_failure", lambda *a, **k: None)
    ids = {}
    monkeypatch.setattr(suite.common, "implementation_id", lambda task, impl: ids.get((task, impl), "v1"))
    measured, written, failing = [], [], set()

    def measure(cells, *, cache_sim):
        measured.append({(c.task, c.impl) for c in cells})
        out = [
            {**c.__dict__, "instructions": 1.0, "error": "boom" if (c.task, c.impl) in failing else ""}
            for c in cells
        ]
        return {"format": 1, "seconds": {}, "cells": out}

    monkeypatch.setattr(suite.cost, "measure", measure)
    first = suite._measure()
    everything = measured[0]
    assert ("g1_walk", "handwritten") in everything and written[-1]["reused"] is False
    assert suite._measure().keys() == first.keys() and len(measured) == 1  # all reused
    assert written[-1]["reused"] is True and len(written[-1]["reused_kernels"]) == len(everything)
    ids[("g1_walk", "handwritten")] = "v2"  # a comment in one kernel
    failing.add(("g1_walk", "handwritten"))
    again = suite._measure()
    assert measured[-1] == {("g1_walk", "handwritten")} and again.keys() == first.keys()
    assert written[-1]["reused"] is False and "g1_walk/handwritten" not in written[-1]["reused_kernels"]
    order = [(c["kind"], c["task"], c["impl"], c["num_envs"]) for c in written[-1]["cells"]]
    assert order == list(first)  # every cell, in the pass's order, the stored ones beside the measured
    failing.clear()
    suite._measure()
    assert measured[-1] == {("g1_walk", "handwritten")}  # the erred cells were not kept
    suite._measure()
    assert len(measured) == 3
