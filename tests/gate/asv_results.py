"""Write asv results directories for tests with asv's own writers (``asv.results.Results``, ``asv.util``).

The samples are whatever a test asks for (random draws with a known truth); the files are in exactly the format
``asv run`` writes, and the sidecar lines come from ``benchmarks._common.sidecar_line``.
"""

from __future__ import annotations

import datetime
import itertools
import json
from pathlib import Path

from asv import util
from asv.results import Results
from asv.runner import BenchmarkResult

from benchmarks import _common
from gate.domain.benchmarks import (
    AGAINST_BASE,
    COLLECTOR_CHECK,
    COLLECTOR_COST,
    COLLECTOR_PAIRED,
    COST,
    GRID,
    PAIRED,
    TIME,
)

GRID_PARAMS = {
    "task": ["g1_walk", "g1_motion"],
    "impl": ["numpy", "handwritten", "assembled", "assembled_generic"],
    "num_envs": [4096, 32768],
    "threads": [1, 2],
}
PAIRED_IMPLS = ["assembled", "assembled_generic"]
COLLECTOR_ENVS = [64]  # benchmarks/collector.py's quick grid: 64 envs at 1 thread
ENV = "virtualenv-py3.11"
REPEAT = 10  # samples per asv round (process) of the timing benchmark, as benchmarks/hot_slice.py fixes it


def benchmarks_json() -> dict:
    def grid(impls):
        params = dict(GRID_PARAMS, impl=impls)
        return [[repr(v) for v in params[name]] for name in GRID]

    cost_grid = [
        [repr(v) for v in GRID_PARAMS["task"]],
        [repr(v) for v in GRID_PARAMS["impl"]],
        [repr(v) for v in GRID_PARAMS["num_envs"]],
        ["1"],
    ]
    costs = {
        name: {
            "name": name,
            "param_names": list(GRID),
            "params": cost_grid,
            "unit": metric,
            "type": "track",
            "version": "1",
        }
        for metric, name in COST.items()
    }
    collector_grid = [
        [repr(v) for v in GRID_PARAMS["task"]],
        [repr(v) for v in GRID_PARAMS["impl"]],
        [repr(v) for v in COLLECTOR_ENVS],
        ["1"],
    ]
    collector = {
        name: {
            "name": name,
            "param_names": list(GRID),
            "params": collector_grid,
            "unit": metric,
            "type": "track",
            "version": "1",
        }
        for metric, name in COLLECTOR_COST.items()
    }
    collector[COLLECTOR_CHECK] = {
        "name": COLLECTOR_CHECK,
        "param_names": list(GRID),
        "params": collector_grid,
        "unit": "reward",
        "type": "track",
        "version": "1",
    }
    collector[COLLECTOR_PAIRED] = {
        "name": COLLECTOR_PAIRED,
        "param_names": list(GRID),
        "params": [collector_grid[0], [repr(i) for i in PAIRED_IMPLS], *collector_grid[2:]],
        "unit": "ratio",
        "type": "track",
        "version": "1",
    }
    return {
        **costs,
        **collector,
        TIME: {
            "name": TIME,
            "param_names": list(GRID),
            "params": grid(GRID_PARAMS["impl"]),
            "unit": "seconds",
            "type": "time",
            "version": "1",
            "repeat": REPEAT,
        },
        PAIRED: {
            "name": PAIRED,
            "param_names": list(GRID),
            "params": grid(PAIRED_IMPLS),
            "unit": "ratio",
            "type": "track",
            "version": "1",
        },
        AGAINST_BASE: {
            "name": AGAINST_BASE,
            "param_names": list(GRID),
            "params": grid(GRID_PARAMS["impl"]),
            "unit": "ratio",
            "type": "track",
            "version": "1",
        },
    }


def _with_provenance(provenance: dict | None):
    """``_common.sidecar_line`` with ``provenance`` in place of this tree's (None: without one)."""

    def line(kind: str, record: dict, **kw) -> dict:
        out = _common.sidecar_line(kind, record, **kw)
        if provenance is None:
            out.pop("provenance", None)
        else:
            out["provenance"] = provenance
        return out

    return line


def write(
    root: Path,
    *,
    machine: str,
    commit: str,
    times,
    pairs,
    failed: frozenset = frozenset(),
    env: str = ENV,
    date: datetime.datetime | None = None,
    costs=None,
    messages: dict | None = None,
    collector=None,
    collector_costs=None,
    collector_failed: dict | None = None,
    provenance: dict | None = None,
    against=None,
) -> Path:
    """A results dir under ``root``: ``times(cell) -> samples or None`` (skipped) and ``pairs(cell) -> list of
    per-process pair-ratio lists``; ``failed`` cells are recorded as asv records a raising benchmark.
    ``costs(cell) -> {metric: value} or None`` (skipped; the string "failed": a raising cost pass) writes the
    cost suite (1 thread) when given. ``messages`` maps a failed cell (task, impl, num_envs, threads) to the
    exception its benchmark wrote to the sidecar.

    ``collector(cell) -> list of per-process lists of (base_s, impl_s) step-time pairs, or None`` writes the
    collector suite (every implementation's check passes, paired cells of PAIRED_IMPLS at 64 envs, 1 thread);
    ``collector_failed`` maps (task, impl) to the message of a collector that failed its check (and its
    paired benchmark); ``collector_costs`` is ``costs`` for the collector step. ``provenance`` is what every
    sidecar record says measured the commit (default: nothing recorded, as before runs recorded it)."""
    results_dir = root / "results"
    (results_dir / machine).mkdir(parents=True, exist_ok=True)
    benchmarks = benchmarks_json()
    util.write_json(str(results_dir / "benchmarks.json"), benchmarks, api_version=2)
    info = {"machine": machine, "arch": "x86_64", "cpu": "test", "num_cpu": "2", "os": "Linux", "ram": "1"}
    util.write_json(str(results_dir / machine / "machine.json"), info, api_version=1)
    date = int((date or datetime.datetime(2026, 11, 30, tzinfo=datetime.UTC)).timestamp() * 1000)
    results = Results(dict(info), {}, commit, date, "3.11", env, {})
    applied = _common.place()
    sidecar_line = _with_provenance(provenance)
    sidecar = root / "fusegate" / commit[:8]
    sidecar.mkdir(parents=True, exist_ok=True)
    lines = [sidecar_line("placement", {}, commit=commit, env=env, applied=applied)]
    for (task, impl, n, t), message in (messages or {}).items():
        record = {"task": task, "impl": impl, "num_envs": n, "threads": t, "message": message}
        lines.append(sidecar_line("failure", record, commit=commit, env=env, applied=applied))
    for name, impls in ((TIME, GRID_PARAMS["impl"]), (PAIRED, PAIRED_IMPLS)):
        params = dict(GRID_PARAMS, impl=impls)
        values, samples = [], []
        for combo in itertools.product(*(params[n] for n in GRID)):
            cell = dict(zip(GRID, combo, strict=True))
            key = tuple(combo)
            if name == TIME:
                s = times(cell)
                if key in failed:
                    values.append(None)
                    samples.append(None)
                elif s is None:
                    values.append(float("nan"))
                    samples.append(None)
                else:
                    values.append(float(sorted(s)[len(s) // 2]))
                    samples.append(list(map(float, s)))
            else:
                processes = None if key in failed else pairs(cell)
                values.append(None if key in failed else (float("nan") if processes is None else 1.0))
                samples.append(None)
                for ratios in processes or []:
                    record = {
                        **cell,
                        "baseline": "handwritten",
                        "pairs": [
                            {"base_s": 1e-3, "impl_s": 1e-3 * r, "first": "handwritten"} for r in ratios
                        ],
                    }
                    lines.append(sidecar_line("paired", record, commit=commit, env=env, applied=applied))
        numbers = [1 if s is not None else None for s in samples]  # asv: tracks and failures have no number
        result = BenchmarkResult(
            result=values, samples=samples, number=numbers, errcode=0, stderr="", profile=None
        )
        results.add_result(benchmarks[name], result, record_samples=True)
    if against is not None:
        values = []
        for combo in itertools.product(*(GRID_PARAMS[n] for n in GRID)):
            cell = dict(zip(GRID, combo, strict=True))
            processes = against(cell)
            values.append(float("nan") if processes is None else 1.0)
            for ratios in processes or []:
                record = {
                    **cell,
                    "baseline": "base",
                    "base_commit": (provenance or {}).get("against"),
                    "pairs": [{"base_s": 1e-3, "impl_s": 1e-3 * r, "first": "base"} for r in ratios],
                }
                lines.append(sidecar_line("against_base", record, commit=commit, env=env, applied=applied))
        _track(results, benchmarks[AGAINST_BASE], values)
    if costs is not None:
        _write_costs(results, benchmarks, costs, COST, GRID_PARAMS["num_envs"])
    if collector is not None:
        _write_collector(
            results, benchmarks, lines, collector, collector_failed or {}, commit, env, applied, sidecar_line
        )
    if collector_costs is not None:
        _write_costs(results, benchmarks, collector_costs, COLLECTOR_COST, COLLECTOR_ENVS)
    results.save(str(results_dir))
    with open(sidecar / "records.jsonl", "a") as f:
        f.writelines(json.dumps(line) + "\n" for line in lines)
    return results_dir


def _track(results: Results, benchmark: dict, values: list) -> None:
    result = BenchmarkResult(
        result=values,
        samples=[None] * len(values),
        number=[None] * len(values),
        errcode=0,
        stderr="",
        profile=None,
    )
    results.add_result(benchmark, result, record_samples=True)


def _write_costs(results: Results, benchmarks: dict, costs, names: dict, scales: list) -> None:
    combos = list(itertools.product(GRID_PARAMS["task"], GRID_PARAMS["impl"], scales, [1]))
    measured = [costs(dict(zip(GRID, combo, strict=True))) for combo in combos]
    for metric, name in names.items():
        values = [
            None if m == "failed" else float("nan") if m is None else float(m[metric]) for m in measured
        ]
        _track(results, benchmarks[name], values)


def _write_collector(
    results, benchmarks, lines, collector, failed: dict, commit, env, applied, sidecar_line
) -> None:
    """CollectorCheck for every implementation, CollectorPaired for PAIRED_IMPLS, at COLLECTOR_ENVS, 1 thread."""
    for (task, impl), message in failed.items():
        record = {
            "task": task,
            "impl": impl,
            "num_envs": COLLECTOR_ENVS[0],
            "threads": 1,
            "suite": "collector",
            "message": message,
        }
        lines.append(sidecar_line("failure", record, commit=commit, env=env, applied=applied))
    checks = itertools.product(GRID_PARAMS["task"], GRID_PARAMS["impl"], COLLECTOR_ENVS, [1])
    _track(
        results,
        benchmarks[COLLECTOR_CHECK],
        [None if (t, i) in failed else 0.0 for t, i, _, _ in checks],
    )
    values = []
    for task, impl, n, t in itertools.product(GRID_PARAMS["task"], PAIRED_IMPLS, COLLECTOR_ENVS, [1]):
        cell = {"task": task, "impl": impl, "num_envs": n, "threads": t}
        processes = None if (task, impl) in failed else collector(cell)
        values.append(None if (task, impl) in failed else float("nan") if processes is None else 1.0)
        for pairs in processes or []:
            phases = {"physics": 450.0, "kernel": 0.4, "rest": 40.0}
            record = {
                **cell,
                "baseline": "handwritten",
                "block": 2,
                "pairs": [
                    {"base_s": b, "impl_s": i, "first": "handwritten", "base_us": phases, "impl_us": phases}
                    for b, i in pairs
                ],
            }
            lines.append(sidecar_line("collector_paired", record, commit=commit, env=env, applied=applied))
    _track(results, benchmarks[COLLECTOR_PAIRED], values)
