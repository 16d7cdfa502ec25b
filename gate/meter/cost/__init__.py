"""The deterministic cost of ``update_state``: instructions and simulated cache misses per call, under callgrind.

Wall time on a shared 2-core runner cannot resolve a few percent; instruction counts can. One callgrind process
imports what every kernel needs and forks a child per kernel (``gate.meter.cost.by_kernel``,
``gate.meter.cost.worker.serve``) that measures that kernel's requested cells, with instrumentation on only around
the measured calls, and each call's costs dumped on its own (``callgrind.dump_stats_at``):

- **Machine code.** Numba keys its cache by CPU name and features, and valgrind's emulated CPU is not the host's.
  Every cost process pins Numba's target to ``TARGET`` (x86-64-v3: AVX2 and FMA, which valgrind 3.19 emulates),
  and a native process compiles the kernels for that target first (``fill``), so valgrind only loads them
  from the cache. Base, head and every machine of a fleet measure the same target's code; it is not the
  host-tuned code the wall-time cells run (that code is what ``time_update_state`` measures).
- **Determinism.** One thread on Numba's workqueue layer (no spinning OpenMP workers), ``PYTHONHASHSEED=0``,
  fixed synthetic inputs (seed 0) and a fixed simulated cache (``CACHE``), so a cell's cost depends only on
  the code. ``fusegate kernels cost --processes 2`` prints how far two processes differ: at most 0.062% in
  instructions over the quick profile here (docs/measurements.md).
- **Collector steps.** A ``collector`` cell measures one ``Collector`` step (``kernels.sim.collector``) of the
  task with the implementation at 1 thread, everything but physics: instrumentation stops around MuJoCo's batch
  step and forward (``gate.meter.cost.worker``). Physics is MuJoCo's code, the same binary on base and head (its
  version is in the software fingerprint), and its time is in the wall-time cells; what the project's code
  does per step around it (getters, the kernel, resets, bookkeeping, replay, the policy's forward pass) is
  counted exactly. Steps differ in work (resets), the same way in every process.
- **Estimated cycles** weigh the cache simulation's hits and misses as Iai-Callgrind does (L1 hit 1, LL hit 5,
  RAM 35 cycles; the weights of Itamar Turner-Trauring's "Ir + cache" model that CodSpeed and Iai adopted):
  ``EstimatedCycles = L1 hits + 5 * LL hits + 35 * RAM hits``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict
from pathlib import Path

from gate.meter.cost.cells import CALLS, COLLECTOR, METRICS, UPDATE_STATE, Cell, CellCost
from gate.meter.cost.plan import (
    COLLECTOR_CALLS,
    by_kernel,
    calls_for,
    jobs_default,
    partition,
    warm_for,
    weight,
)
from gate.meter.cost.valgrind_tool import (
    CACHE,
    INSTALL_HINT,
    TARGET,
    TARGET_FLAGS,
    WEIGHTS,
    CostError,
    callgrind_command,
    check_target,
    ensure_valgrind,
    parse_dump,
    per_call,
    valgrind,
    valgrind_version,
)

__all__ = [
    "CACHE",
    "CALLS",
    "COLLECTOR",
    "COLLECTOR_CALLS",
    "FORMAT",
    "INSTALL_HINT",
    "METRICS",
    "TARGET",
    "TARGET_FLAGS",
    "UPDATE_STATE",
    "WEIGHTS",
    "Cell",
    "CellCost",
    "CostError",
    "by_kernel",
    "callgrind_command",
    "calls_for",
    "check_target",
    "collect",
    "ensure_valgrind",
    "jobs_default",
    "measure",
    "parse_dump",
    "partition",
    "per_call",
    "valgrind",
    "valgrind_version",
    "warm_for",
    "weight",
    "worker_env",
]

FORMAT = 1


def worker_env() -> dict[str, str]:
    """The environment of every cost process, native fill and valgrind alike."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NUMBA_CPU", "FUSEGATE_"))}
    env.update(TARGET)
    import importlib

    import gate.meter
    import kernels  # the cache directory of this source tree
    from gate.meter import subject

    tasks = importlib.import_module(subject.declaration().tasks)  # the subject's tasks, wherever they live
    depth = subject.declaration().tasks.count(".") + 1
    roots = dict.fromkeys(
        str(Path(m.__file__).resolve().parents[i]) for m, i in ((tasks, depth), (kernels, 1), (gate.meter, 2))
    )
    env.update(
        # The workers import the very subject (its tasks and kernels) and meter the driver did (asv's environment
        # of the measured commit), never ones found through their working directory or a PYTHONPATH of the
        # caller's, and read the declaration of the tree it measures.
        PYTHONPATH=os.pathsep.join(roots),
        **{subject.VARIABLE: str(subject.root())},
        NUMBA_CACHE_DIR=str(Path(kernels.NUMBA_CACHE_DIR).parent),
        NUMBA_NUM_THREADS="1",
        NUMBA_THREADING_LAYER="workqueue",
        OMP_NUM_THREADS="1",
        OPENBLAS_NUM_THREADS="1",
        PYTHONHASHSEED="0",
    )
    return env


def collect(out_dir: Path, cells: list[Cell], errors: dict[str, str]) -> list[CellCost]:
    """Every cell's per-call cost (its measured calls' total over their count) from the dumps in ``out_dir``
    (labels ``<cell>#<call>``; ``#warm`` dumps are not counted)."""
    calls: dict[str, list[dict[str, float]]] = {}
    for path in sorted(out_dir.glob("callgrind.out.*")):
        label, events = parse_dump(path.read_text())
        cell, _, call = label.rpartition("#")
        if cell and call.isdigit():
            calls.setdefault(cell, []).append(per_call(events))
    out = []
    for cell in cells:
        measured = calls.get(cell.label, [])
        if cell.label in errors or not measured:
            error = errors.get(cell.label, "no measured call (the worker stopped before this cell)")
            out.append(
                CellCost(task=cell.task, impl=cell.impl, num_envs=cell.num_envs, kind=cell.kind, error=error)
            )
            continue
        means = {
            key: None if measured[0][key] is None else sum(c[key] for c in measured) / len(measured)
            for key in METRICS
        }
        irs = [c["instructions"] for c in measured]
        spread = (max(irs) - min(irs)) / means["instructions"] if means["instructions"] else 0.0
        out.append(
            CellCost(
                task=cell.task,
                impl=cell.impl,
                num_envs=cell.num_envs,
                kind=cell.kind,
                calls=len(measured),
                spread=spread,
                **means,
            )
        )
    return out


def _tail(*logs: Path, lines: int = 12) -> str:
    text = []
    for log in logs:
        if log.exists():
            text += log.read_text(errors="replace").strip().splitlines()[-lines:]
    return "\n".join(text)


def _run(command: list[str], log: Path, env: dict, deadline: float) -> str:
    """Run one command to its end or the deadline: "" or what went wrong (exit code and the log's tail)."""
    if time.monotonic() >= deadline:
        return "not started: the cost pass's deadline had passed"
    with open(log, "w") as out:  # cwd: the log's directory, so no package is imported from the caller's
        proc = subprocess.Popen(
            command, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=log.parent, start_new_session=True
        )
    try:
        code = proc.wait(timeout=max(1.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # its forked children too
        proc.wait()
        return f"killed at the cost pass's deadline; last output:\n{_tail(log)}"
    if code == 0:
        return ""
    return f"exited with {code}:\n{_tail(log, log.with_name(log.name.replace('worker', 'valgrind')))}"


def _run_all(
    commands: list[list[str]], logs: list[Path], *, env: dict, deadline: float, jobs: int
) -> list[str]:
    """Run the commands, ``jobs`` at a time, in order; per command, "" or what went wrong. Every process is
    waited for; at the deadline the running ones are killed and the rest not started."""
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        return list(pool.map(lambda c, log: _run(c, log, env, deadline), commands, logs))


def measure(
    cells: list[Cell],
    *,
    calls: int = CALLS,
    jobs: int | None = None,
    timeout: float = 1500,
    keep: Path | None = None,
    cache_sim: bool = True,
) -> dict:
    """Every cell's cost under one callgrind process that forks a child per kernel (``by_kernel``,
    ``worker.serve``), ``jobs`` children at a time (callgrind counts are independent of load), all within
    ``timeout`` seconds; returns ``{"cells": [...],
    "seconds": {...}, ...}`` (``format`` FORMAT). A process that fails errs its own cells only, with its exit
    code and output. ``keep``: a new or empty directory to keep the callgrind dumps and logs in. Without
    ``cache_sim`` only instructions are counted (the cache metrics are None), in less time."""
    valgrind()  # fails early, with the install hint, when valgrind is missing
    check_target()
    deadline = time.monotonic() + timeout
    env = worker_env()
    jobs = jobs or jobs_default()
    groups = by_kernel(cells)
    seconds: dict = {}
    with tempfile.TemporaryDirectory(prefix="fusegate-cost-") as tmp:
        out_dir = Path(keep) if keep else Path(tmp)
        out_dir.mkdir(parents=True, exist_ok=True)
        if any(out_dir.iterdir()):
            raise CostError(f"{out_dir} is not empty: give a new or empty directory to keep the dumps in")

        def worker(name: str, group: list[Cell]) -> list[str]:
            spec = {
                "format": FORMAT,
                "cells": [{**asdict(c), "calls": calls_for(c, calls), "warm": warm_for(c)} for c in group],
            }
            (out_dir / f"cells.{name}.json").write_text(json.dumps(spec))
            return [
                sys.executable,
                "-m",
                "gate.meter.cost.worker",
                str(out_dir / f"cells.{name}.json"),
                str(out_dir / f"report.{name}.json"),
            ]

        # the native compile for the cost target: a few processes, each kernel in one of them
        fills = partition(cells, jobs)
        t0 = time.perf_counter()
        filled = _run_all(
            [[*worker(f"fill{i}", g), "--fill"] for i, g in enumerate(fills)],
            [out_dir / f"fill.{i}.log" for i in range(len(fills))],
            env=env,
            deadline=deadline,
            jobs=jobs,
        )
        seconds["fill"] = time.perf_counter() - t0
        fill_problem = {c.label: problem for g, problem in zip(fills, filled, strict=True) for c in g}
        for i, group in enumerate(groups):
            worker(str(i), group)  # writes cells.<i>.json: the serving process forks a child per kernel
        t0 = time.perf_counter()
        [run] = _run_all(
            [
                [
                    *callgrind_command(out_dir, cache_sim=cache_sim),
                    sys.executable,
                    "-m",
                    "gate.meter.cost.worker",
                    "--kernels",
                    str(out_dir),
                    str(len(groups)),
                    str(jobs),
                ]
            ],
            [out_dir / "worker.0.log"],
            env=env,
            deadline=deadline,
            jobs=1,
        )
        seconds["valgrind"] = time.perf_counter() - t0
        try:
            children = json.loads((out_dir / "children.json").read_text())
        except (OSError, ValueError):
            children = {}
        errors: dict[str, str] = {}
        for i, group in enumerate(groups):
            try:
                report, missing = json.loads((out_dir / f"report.{i}.json").read_text()), ""
            except (OSError, ValueError):
                report, missing = {"errors": {}, "seconds": {}}, "the callgrind worker wrote no report"
                if str(i) in children:
                    missing = f"the callgrind worker's child for this kernel exited with {children[str(i)]}"
            errors.update(report["errors"])
            seconds[f"worker {i}"] = report["seconds"]
            for cell in group:
                problem = (run and f"the callgrind worker {run}") or missing
                if fill_problem[cell.label]:
                    problem = f"the native compile for {TARGET['NUMBA_CPU_NAME']} {fill_problem[cell.label]}"
                if problem and cell.label not in errors:
                    errors[cell.label] = problem
        costs = collect(out_dir, cells, errors)
    return {
        "format": FORMAT,
        "target": TARGET["NUMBA_CPU_NAME"],
        "cache": {k: list(v) for k, v in CACHE.items()} if cache_sim else None,
        "weights": WEIGHTS,
        "calls": calls,
        "jobs": jobs,  # valgrind processes at a time
        "processes": len(groups),  # one child per kernel
        "valgrind": valgrind_version(),
        "seconds": seconds,
        "cells": [c.to_dict() for c in costs],
    }
