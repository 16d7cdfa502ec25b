"""The processes ``gate.meter.cost.measure`` starts: ``python -m gate.meter.cost.worker CELLS.json REPORT.json
--fill`` natively, then ``python -m gate.meter.cost.worker --kernels DIR COUNT JOBS`` under callgrind (``serve``:
one child forked per kernel).

With ``--fill`` (natively) it compiles every (task, implementation) of the cells for the pinned target, so the
valgrind run only loads them from Numba's cache. Without it (under callgrind, ``--instr-atstart=no``) it
measures each cell: one uninstrumented call (cache load, first touch), then instrumentation on, the cell's warm
calls (dumped as ``<cell>#warm``, not counted), then each measured call dumped as ``<cell>#<i>``. A collector
cell (``kind`` collector) does the same with steps of a ``Collector`` built at 1 thread, seed 0, after one
uninstrumented step, and with instrumentation stopped around physics (``sim.step``, ``sim.forward_rows``).
A cell that raises is written to the report with its exception and the others go on.
"""

from __future__ import annotations

import gc
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

from gate.meter import subject
from gate.meter.cost import callgrind
from gate.meter.cost.cells import COLLECTOR, UPDATE_STATE, Cell
from gate.meter.subject import make_inputs

SHARED_ENVS = 1  # the simulators the serving process builds before it forks: models loaded, nothing measured
FILL_ENVS = 64  # the kernels' signatures do not depend on N: compile them on a small snapshot
# Uninstrumented collector steps first (construction ran the reset step): everything compiled is loaded.
COLLECTOR_WARMUP = 1


def _cells(spec: dict) -> list[tuple[Cell, int, int]]:
    return [
        (
            Cell(
                task=c["task"],
                impl=c["impl"],
                num_envs=int(c["num_envs"]),
                kind=c.get("kind", UPDATE_STATE),
            ),
            int(c["calls"]),
            int(c["warm"]),
        )
        for c in spec["cells"]
    ]


def fill(spec: dict) -> dict[str, str]:
    registry = subject.registry()
    errors = {}
    for cell in dict.fromkeys(
        Cell(task=c.task, impl=c.impl, num_envs=FILL_ENVS, kind=c.kind) for c, *_ in _cells(spec)
    ):
        try:
            if cell.kind == COLLECTOR:  # the getters, resets and bookkeeping too
                from kernels.sim.collector import Collector

                collector = Collector(cell.task, cell.impl, num_envs=FILL_ENVS, threads=1, seed=0)
                with collector.threads_limited():
                    collector.step()
            else:
                registry.load(cell.task, cell.impl, num_envs=FILL_ENVS, threads=1).update_state(
                    make_inputs(cell.task, FILL_ENVS, seed=0)
                )
        except Exception as exc:  # reported per cell by the valgrind run, which meets the same exception
            errors[cell.label] = f"{type(exc).__name__}: {exc}"
    return errors


def _uninstrumented(call: Callable) -> Callable:
    def paused(*args, **kwargs):
        callgrind.stop_instrumentation()
        try:
            return call(*args, **kwargs)
        finally:
            callgrind.start_instrumentation()

    return paused


def _prepare(cell: Cell) -> Callable[[], None]:
    """What one measured call of the cell is, ready to call (loaded, warm, uninstrumented so far)."""
    if cell.kind == COLLECTOR:
        from kernels.sim.collector import Collector

        collector = Collector(cell.task, cell.impl, num_envs=cell.num_envs, threads=1, seed=0)
        with collector.threads_limited():
            for _ in range(COLLECTOR_WARMUP):
                collector.step()
        sim = collector.env.sim  # physics is MuJoCo's: not counted (gate.meter.cost)
        sim.step, sim.forward_rows = _uninstrumented(sim.step), _uninstrumented(sim.forward_rows)
        return collector.step
    snap = make_inputs(cell.task, cell.num_envs, seed=0)
    kernel = subject.registry().load(cell.task, cell.impl, num_envs=cell.num_envs, threads=1)
    kernel.update_state(snap)
    return lambda: kernel.update_state(snap)


def run(spec: dict) -> dict:
    t0 = time.perf_counter()
    subject.registry()  # timed: the tasks, then Numba and the kernel base, are the first cost
    import kernels.kernel  # noqa: F401

    if not callgrind.running_on_valgrind():
        raise SystemExit("gate.meter.cost.worker measures under valgrind: use gate.meter.cost.measure")
    errors, seconds = {}, {"import": time.perf_counter() - t0}
    for cell, calls, warm in _cells(spec):
        label = cell.label
        t0 = time.perf_counter()
        try:
            call = _prepare(cell)
            t1 = time.perf_counter()
            seconds[f"{label} load"] = t1 - t0
            t0 = t1
            gc.collect()  # no collection inside a measured call: its count would depend on earlier allocations
            gc.disable()
            callgrind.start_instrumentation()
            try:
                for _ in range(warm):
                    call()
                    callgrind.dump_stats_at(f"{label}#warm")
                for i in range(calls):
                    call()
                    callgrind.dump_stats_at(f"{label}#{i}")
            finally:
                callgrind.stop_instrumentation()
                gc.enable()
        except Exception as exc:
            errors[label] = f"{type(exc).__name__}: {exc}"
        seconds[f"{label} measure"] = time.perf_counter() - t0
    return {"errors": errors, "seconds": seconds}


def serve(out_dir: Path, count: int, jobs: int) -> int:
    """Under callgrind: import once what every kernel's cells need, then measure each kernel's cells
    (``cells.<i>.json`` -> ``report.<i>.json`` in ``out_dir``) in a child forked from that state, ``jobs`` children
    at a time. Every child starts from the same state whatever the others measure, so a kernel counts the same
    alone or in a whole pass, without paying the interpreter's and valgrind's start, Numba's and MuJoCo's imports
    once per kernel. A child that does not exit 0 is named in ``children.json``."""
    t0 = time.perf_counter()
    registry = subject.registry()
    import kernels.kernel  # noqa: F401

    if not callgrind.running_on_valgrind():
        raise SystemExit("gate.meter.cost.worker measures under valgrind: use gate.meter.cost.measure")
    try:  # MuJoCo, every task's model and simulator: the same for every child, whatever the pass measures
        for task in registry.tasks:
            env = registry.env_class(task)
            if env is not None:
                env(SHARED_ENVS, 1, 0)
    except Exception:
        pass  # a child that needs them meets the error itself, in its cell
    shared = time.perf_counter() - t0
    running: dict[int, int] = {}
    failed: dict[str, int] = {}

    def reap() -> None:
        pid, status = os.wait()
        code = os.waitstatus_to_exitcode(status)
        if code:
            failed[str(running[pid])] = code
        del running[pid]

    for i in range(count):
        while len(running) >= jobs:
            reap()
        pid = os.fork()
        if pid == 0:  # the child: measure this kernel's cells, never return into the parent's loop
            code = 1
            try:
                result = run(json.loads((out_dir / f"cells.{i}.json").read_text()))
                result["seconds"] = {"shared import": shared, **result["seconds"]}
                (out_dir / f"report.{i}.json").write_text(json.dumps(result))
                code = 0
            finally:
                os._exit(code)
        running[pid] = i
    while running:
        reap()
    (out_dir / "children.json").write_text(json.dumps(failed))
    return 0


def main(argv: list[str]) -> int:
    if argv[:1] == ["--kernels"]:
        out_dir, count, jobs = argv[1:]
        return serve(Path(out_dir), int(count), int(jobs))
    spec_path, report_path, *flags = argv
    spec = json.loads(Path(spec_path).read_text())
    if flags == ["--fill"]:
        fill(spec)
    else:
        Path(report_path).write_text(json.dumps(run(spec)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
