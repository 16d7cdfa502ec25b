"""The process ``kernels.cost.measure`` starts: ``python -m kernels.cost.worker CELLS.json ERRORS.json [--fill]``.

With ``--fill`` (natively) it compiles every (task, implementation) of the cells for the pinned target, so the
valgrind run only loads them from Numba's cache. Without it (under callgrind, ``--instr-atstart=no``) it
measures each cell: one uninstrumented call (cache load, first touch), then instrumentation on, the cell's warm
calls (dumped as ``<cell>#warm``, not counted), then each measured call dumped as ``<cell>#<i>``. A cell that
raises is written to ERRORS.json with its exception and the others go on.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from kernels.cost import callgrind

FILL_ENVS = 64  # the kernels' signatures do not depend on N: compile them on a small snapshot


def _cells(spec: dict) -> list[tuple[str, str, int, int, int]]:
    return [
        (c["task"], c["impl"], int(c["num_envs"]), int(c["calls"]), int(c["warm"])) for c in spec["cells"]
    ]


def fill(spec: dict) -> dict[str, str]:
    import kernels

    errors = {}
    for task, impl in dict.fromkeys((t, i) for t, i, *_ in _cells(spec)):
        try:
            kernels.load(task, impl, num_envs=FILL_ENVS, threads=1).update_state(
                kernels.make_inputs(task, FILL_ENVS, seed=0)
            )
        except Exception as exc:  # reported per cell by the valgrind run, which meets the same exception
            errors[f"{task}/{impl}"] = f"{type(exc).__name__}: {exc}"
    return errors


def run(spec: dict) -> dict:
    t0 = time.perf_counter()
    import kernels

    if not callgrind.running_on_valgrind():
        raise SystemExit("kernels.cost.worker measures under valgrind: use kernels.cost.measure")
    errors, seconds = {}, {"import": time.perf_counter() - t0}
    for task, impl, n, calls, warm in _cells(spec):
        label = f"{task}/{impl}/{n}"
        t0 = time.perf_counter()
        try:
            snap = kernels.make_inputs(task, n, seed=0)
            kernel = kernels.load(task, impl, num_envs=n, threads=1)
            kernel.update_state(snap)
            t1 = time.perf_counter()
            seconds[f"{label} load"] = t1 - t0
            t0 = t1
            callgrind.start_instrumentation()
            try:
                for _ in range(warm):
                    kernel.update_state(snap)
                    callgrind.dump_stats_at(f"{label}#warm")
                for i in range(calls):
                    kernel.update_state(snap)
                    callgrind.dump_stats_at(f"{label}#{i}")
            finally:
                callgrind.stop_instrumentation()
        except Exception as exc:
            errors[label] = f"{type(exc).__name__}: {exc}"
        seconds[f"{label} measure"] = time.perf_counter() - t0
    return {"errors": errors, "seconds": seconds}


def main(argv: list[str]) -> int:
    spec_path, report_path, *flags = argv
    spec = json.loads(Path(spec_path).read_text())
    if flags == ["--fill"]:
        fill(spec)
    else:
        Path(report_path).write_text(json.dumps(run(spec)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
