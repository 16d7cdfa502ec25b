"""Where an asv run's time went (gate.runner.timeprofile) and fusegate run's progress over asv (gate.runner.asvrun)."""

from __future__ import annotations

import json
import sys
import textwrap
import time
from pathlib import Path

import pytest

from gate.runner import asvrun, timeprofile

SHA = "ab12cd34" + "0" * 32
COLUMNS = ["result", "params", "version", "started_at", "duration"]


def _results(root: Path, durations: dict[str, float], caches: dict[str, float]) -> Path:
    results = root / "results"
    (results / "m1").mkdir(parents=True)
    known = {name: {"setup_cache_key": "_common:140"} for name in durations if name.startswith("hot_slice.")}
    known |= {name: {} for name in durations if not name.startswith("hot_slice.")}
    (results / "benchmarks.json").write_text(json.dumps({**known, "version": 2}))
    data = {
        "result_columns": COLUMNS,
        "results": {name: [None, [], "v", 0, seconds] for name, seconds in durations.items()},
        "durations": {"<build>": 1.5, **{f"<setup_cache {k}>": v for k, v in caches.items()}},
    }
    (results / "m1" / f"{SHA[:8]}-existing-py.json").write_text(json.dumps(data))
    return results


def _process(benchmark: str, age: float, *, startup=0.2, imports=0.5, parity=0.0, load=0.3, at=None) -> dict:
    phases = {"snapshot": 0.1, "load": load} | ({"parity": parity} if parity else {})
    return {
        "kind": "process",
        "benchmark": benchmark,
        "startup_s": startup,
        "import_s": imports,
        "phases": phases,
        "age_s": age,
        "time": at if at is not None else time.time(),
    }


def _sidecar(results: Path, records: list[dict]) -> None:
    folder = results.parent / "fusegate" / SHA[:8] / "processes"
    folder.mkdir(parents=True)
    for i, r in enumerate(records):
        (folder / f"{i}-1.json").write_text(json.dumps(r))
    (folder / "torn-1.json").write_text('{"torn')


def test_profile_splits_each_class_into_its_processes_parts_and_asv(tmp_path):
    results = _results(
        tmp_path,
        {
            "hot_slice.HotSlice.time_update_state": 10.0,
            "hot_slice.Paired.track_ratio": 6.0,
            "cost.Cost.track_x": 2.0,
        },
        {"_common:140": 4.0, "cost:32": 30.0},
    )
    _sidecar(
        results, [_process("HotSlice", 3.0), _process("HotSlice", 4.0, parity=0.5), _process("Paired", 5.0)]
    )
    rows = {r.name: r for r in timeprofile.profile(results, results.parent / "fusegate", SHA, total_s=60.0)}
    assert (
        next(iter(rows)) == "setup_cache of cost:32"
    )  # the largest first; a cache with no known user by key
    assert rows["setup_cache of hot_slice.HotSlice, hot_slice.Paired"].wall_s == 4.0
    hot = rows["hot_slice.HotSlice"]
    assert (hot.wall_s, hot.processes) == (10.0, 2)
    assert hot.parts["startup"] == pytest.approx(0.4) and hot.parts["parity"] == pytest.approx(0.5)
    assert hot.parts["measuring"] == pytest.approx(7.0 - 2 * (0.2 + 0.5 + 0.1 + 0.3) - 0.5)
    assert sum(hot.parts.values()) == pytest.approx(hot.wall_s)  # every second accounted for, asv's included
    assert rows["hot_slice.Paired"].parts["asv"] == pytest.approx(1.0)
    assert rows["cost.Cost"].processes == 0 and rows["cost.Cost"].parts == {}
    assert rows["(build and install)"].wall_s == 1.5
    assert rows["(asv outside benchmarks)"].wall_s == pytest.approx(60.0 - 53.5)


def test_profile_keeps_one_runs_records_and_is_empty_without_results(tmp_path):
    results = _results(tmp_path, {"hot_slice.HotSlice.time_update_state": 10.0}, {})
    _sidecar(results, [_process("HotSlice", 3.0, at=100.0), _process("HotSlice", 4.0, at=200.0)])
    rows = {r.name: r for r in timeprofile.profile(results, results.parent / "fusegate", SHA, since=150.0)}
    assert rows["hot_slice.HotSlice"].processes == 1
    assert timeprofile.profile(results, results.parent / "fusegate", "f" * 40) == []


FAKE_ASV = textwrap.dedent(
    """
    import sys, time
    lines = [
        "· Discovering benchmarks",
        "[ 0.00%] · For fusegate commit abc:",
        "[50.00%] ··· Setting up cost:32                 ok",
        "[50.00%] ··· cost.Cost.track_instructions        ok",
        "[50.00%] ··· ====== table ======",
        "[100.00%] ··· collector.CollectorCheck.track_reward_max_diff   failed",
    ]
    for line in lines:
        print(line, flush=True)
        time.sleep(0.05)
    sys.exit(int(sys.argv[1]))
    """
)


def test_run_logs_everything_says_each_finished_step_and_keeps_asvs_code(tmp_path):
    script = tmp_path / "fake_asv.py"
    script.write_text(FAKE_ASV)
    call = asvrun.Call(
        {
            "<setup_cache cost:32>": 100.0,
            "cost.Cost.track_instructions": 10.0,
            "collector.CollectorCheck.track_reward_max_diff": 10.0,
        }
    )
    estimate = asvrun.Estimate([call, asvrun.Call({"hot_slice.Paired.track_ratio": 60.0}, rounds=3)])
    said, log = [], tmp_path / "logs" / "asv.log"
    code = asvrun.run(
        [sys.executable, str(script), "2"],
        env={},
        log=log,
        estimate=estimate,
        say=said.append,
        status=lambda _: None,
    )
    assert code == 2
    assert [s.split()[:2] for s in said] == [
        ["ok", "Setting"],
        ["ok", "cost.Cost.track_instructions"],
        ["failed", "collector.CollectorCheck.track_reward_max_diff"],
    ]
    assert "====== table ======" in log.read_text()  # asv's tables go to the log, not the terminal
    assert estimate.fraction == pytest.approx(1.0)  # one round: by the finished steps' weights
    estimate.next_call()
    estimate.percent(50.0)
    assert estimate.fraction == pytest.approx(0.5)  # several rounds: asv's percentage


def test_estimate_scales_what_is_left_by_this_machines_pace():
    estimate = asvrun.Estimate(
        [asvrun.Call({"a.A.x": 100.0, "b.B.y": 100.0})], started=time.monotonic() - 200
    )
    assert estimate.left() == pytest.approx(200.0, abs=1)  # nothing done: the expected time
    estimate.finish("a.A.x")  # done in 200 s what was expected in 100: twice as slow
    assert estimate.left() == pytest.approx(200.0, abs=5)


def test_plan_takes_this_machines_history_else_the_defaults(tmp_path):
    from gate.domain.selection import GATE_BENCH_EXACT, GATE_BENCH_TIMED

    results = _results(
        tmp_path,
        {"hot_slice.HotSlice.time_update_state": 40.0, "cost.Cost.track_x": 2.0},
        {"_common:140": 4.0, "cost:32": 30.0},
    )
    timed = asvrun.plan(GATE_BENCH_TIMED, 3, results, "m1")
    assert timed.steps == {"hot_slice.HotSlice.time_update_state": 40.0, "<setup_cache _common:140>": 4.0}
    assert set(asvrun.plan(GATE_BENCH_EXACT, 1, results, "m1").steps) == {"cost.Cost.track_x"}
    fresh = asvrun.plan(GATE_BENCH_TIMED, 6, tmp_path / "none", None)
    assert fresh.steps["hot_slice.HotSlice"] == 2 * asvrun.DEFAULT_SECONDS["hot_slice.HotSlice"]
    assert "cost.Cost" in asvrun.plan(GATE_BENCH_EXACT, 1, tmp_path / "none", None).steps
