"""The deterministic cost of ``update_state``: instructions and simulated cache misses per call, under callgrind.

Wall time on a shared 2-core runner cannot resolve a few percent; instruction counts can. One
valgrind process measures every requested cell (``gate.meter.cost.worker``), with instrumentation on only around
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
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

FORMAT = 1
REFERENCE = "numpy"  # kernels.registry.REFERENCE (weight and calls are planned before any kernel loads)
TARGET = {"NUMBA_CPU_NAME": "x86-64-v3", "NUMBA_CPU_FEATURES": ""}
# A fixed simulated cache (size, associativity, line bytes), so a cost never depends on what valgrind reads
# from the host's cpuid (a VM here reports a 256 MiB direct-mapped LL).
CACHE = {"I1": (32768, 8, 64), "D1": (32768, 8, 64), "LL": (8 * 1024 * 1024, 16, 64)}
WEIGHTS = {"l1_hit": 1, "ll_hit": 5, "ram": 35}
METRICS = {  # what a cost cell reports per call, and its unit
    "instructions": "instructions",
    "l1_misses": "misses",
    "ll_misses": "misses",
    "estimated_cycles": "cycles",
}
CALLS = 3  # measured calls per cell, after one warm call; every call is dumped on its own
INSTALL_HINT = (
    "install valgrind (Debian/Ubuntu: apt-get install valgrind; Fedora: dnf install valgrind), "
    "or set FUSEGATE_VALGRIND to its path"
)


class CostError(ValueError):
    """The cost pass could not run (no valgrind, a CPU without the pinned target): says what and what to do.
    A ValueError, so the command line prints it as an error at the boundary, not a traceback."""


UPDATE_STATE, COLLECTOR = "update_state", "collector"  # what a cell measures: one call, or one collector step


@dataclass(frozen=True, kw_only=True, order=True)
class Cell:
    task: str
    impl: str
    num_envs: int
    kind: str = UPDATE_STATE

    @property
    def label(self) -> str:
        cell = f"{self.task}/{self.impl}/{self.num_envs}"
        return cell if self.kind == UPDATE_STATE else f"{self.kind}:{cell}"


@dataclass(frozen=True, kw_only=True)
class CellCost:
    """Per-call costs of one cell (the measured calls' total over their count), or the error that stopped it."""

    task: str
    impl: str
    num_envs: int
    kind: str = UPDATE_STATE
    calls: int = 0
    instructions: float | None = None
    l1_misses: float | None = None
    ll_misses: float | None = None
    estimated_cycles: float | None = None
    # (max - min) / mean of the calls' instructions. Calls differ in work, not by noise: state arrays evolve in
    # place and envs reset, the same way in every process (the first measured call of g1_walk at 4096 envs
    # runs 1.1% more instructions than the next two).
    spread: float | None = None
    error: str = ""

    def to_dict(self) -> dict:
        return asdict(self)


def valgrind() -> str:
    """The valgrind executable, or a CostError saying how to install it."""
    path = os.environ.get("FUSEGATE_VALGRIND") or shutil.which("valgrind")
    if not path or not os.access(path, os.X_OK):
        raise CostError(f"the cost signal needs valgrind, which is not on this machine: {INSTALL_HINT}")
    return path


def ensure_valgrind(*, install: bool = False, say=print) -> str:
    """valgrind's path; when it is missing and ``install`` is set, install Debian's package (as root, with
    apt-get), else a CostError with the install command."""
    try:
        return valgrind()
    except CostError:
        if not install or os.geteuid() != 0 or not shutil.which("apt-get"):
            raise
    say("valgrind is missing (the cost signal needs it): apt-get install valgrind")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for command in (["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", "valgrind"]):
        if subprocess.run(command, env=env, check=False, capture_output=True).returncode != 0:
            raise CostError(f"{' '.join(command)} failed: {INSTALL_HINT}")
    return valgrind()


# What the pinned target needs of the CPU that compiles for it (the native fill); /proc/cpuinfo's names.
TARGET_FLAGS = ("avx", "avx2", "fma", "bmi1", "bmi2", "f16c", "movbe")


def check_target(cpuinfo: str | None = None) -> None:
    """A CostError when this CPU cannot run code compiled for the pinned target (the fill would die of SIGILL)."""
    if cpuinfo is None:
        try:
            cpuinfo = Path("/proc/cpuinfo").read_text()
        except OSError:
            return  # nothing to check against: the fill reports what happens
    flags = next(
        (line.split(":", 1)[1].split() for line in cpuinfo.splitlines() if line.startswith("flags")), None
    )
    missing = [f for f in TARGET_FLAGS if flags is not None and f not in flags]
    if missing:
        raise CostError(
            f"the cost signal compiles for {TARGET['NUMBA_CPU_NAME']}, and this CPU lacks {', '.join(missing)}: "
            'measure cost on a machine with AVX2 and FMA, or set cost_metric = "none" in the policy'
        )


def valgrind_version() -> str:
    try:
        done = subprocess.run(
            [valgrind(), "--version"], capture_output=True, text=True, check=True, timeout=30
        )
    except (CostError, OSError, subprocess.SubprocessError):
        return "not installed"
    return done.stdout.strip().removeprefix("valgrind-")


def worker_env() -> dict[str, str]:
    """The environment of every cost process, native fill and valgrind alike."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NUMBA_CPU", "FUSEGATE_"))}
    env.update(TARGET)
    import gate.meter
    import kernels  # the cache directory of this source tree

    roots = dict.fromkeys(
        str(Path(m.__file__).resolve().parents[i]) for m, i in ((kernels, 1), (gate.meter, 2))
    )
    env.update(
        # The workers import the very kernels package (the subject) and meter the driver did (asv's environment of
        # the measured commit), never ones found through their working directory or a PYTHONPATH of the caller's.
        PYTHONPATH=os.pathsep.join(roots),
        NUMBA_CACHE_DIR=str(Path(kernels.NUMBA_CACHE_DIR).parent),
        NUMBA_NUM_THREADS="1",
        NUMBA_THREADING_LAYER="workqueue",
        OMP_NUM_THREADS="1",
        OPENBLAS_NUM_THREADS="1",
        PYTHONHASHSEED="0",
    )
    return env


def callgrind_command(out_dir: Path, job: int = 0, *, cache_sim: bool = True) -> list[str]:
    return [
        valgrind(),
        "--tool=callgrind",
        "--instr-atstart=no",
        f"--cache-sim={'yes' if cache_sim else 'no'}",
        *(f"--{name}={size},{ways},{line}" for name, (size, ways, line) in CACHE.items() if cache_sim),
        f"--callgrind-out-file={out_dir}/callgrind.out.%p",
        f"--log-file={out_dir}/valgrind.{job}.log",
    ]


_TRIGGER = "desc: Trigger: Client Request: "


def parse_dump(text: str) -> tuple[str, dict[str, int]]:
    """(client-request label, event totals) of one callgrind output file."""
    label, events, totals = "", None, None
    for line in text.splitlines():
        if line.startswith(_TRIGGER):
            label = line.removeprefix(_TRIGGER).strip()
        elif line.startswith("events:"):
            events = line.split()[1:]
        elif line.startswith("totals:"):
            totals = [int(x) for x in line.split()[1:]]
    if events is None or totals is None:
        raise CostError("a callgrind output file has no events or totals line")
    return label, dict(zip(events, totals, strict=False))


def per_call(events: dict[str, int]) -> dict[str, float | None]:
    """Instructions, L1 and LL misses and estimated cycles of one dump (only instructions without the cache
    simulation: its events are missing)."""
    get = events.get
    if "Dr" not in events:
        return {"instructions": get("Ir", 0), "l1_misses": None, "ll_misses": None, "estimated_cycles": None}
    accesses = get("Ir", 0) + get("Dr", 0) + get("Dw", 0)
    l1 = get("I1mr", 0) + get("D1mr", 0) + get("D1mw", 0)
    ll = get("ILmr", 0) + get("DLmr", 0) + get("DLmw", 0)
    cycles = WEIGHTS["l1_hit"] * (accesses - l1) + WEIGHTS["ll_hit"] * (l1 - ll) + WEIGHTS["ram"] * ll
    return {"instructions": get("Ir", 0), "l1_misses": l1, "ll_misses": ll, "estimated_cycles": cycles}


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


def _run_all(commands: list[list[str]], logs: list[Path], *, env: dict, deadline: float) -> list[str]:
    """Run the commands at once; per command, "" or what went wrong (exit code and the log's tail). Every
    process is waited for; at the deadline the rest are killed."""
    procs = []
    for command, log in zip(commands, logs, strict=True):
        with open(log, "w") as out:  # cwd: the log's directory, so no package is imported from the caller's
            procs.append(
                subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=log.parent)
            )
    problems = []
    for proc, log in zip(procs, logs, strict=True):
        try:
            code = proc.wait(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            problems.append(f"killed at the cost pass's deadline; last output:\n{_tail(log)}")
            continue
        problems.append(
            ""
            if code == 0
            else f"exited with {code}:\n{_tail(log, log.with_name(log.name.replace('worker', 'valgrind')))}"
        )
    return problems


# Instructions per env and call under callgrind, measured here (fusegate cost, quick profile): what balances
# the cells over the worker processes. An implementation not listed counts as a fused kernel of its task.
_PER_ENV = {
    ("g1_walk", "numpy"): 10_000,
    ("g1_walk", "assembled_generic"): 7_800,
    ("g1_walk", None): 2_000,
    ("g1_motion", "numpy"): 50_000,
    ("g1_motion", "assembled_generic"): 17_000,
    ("g1_motion", None): 6_800,
}


# A collector step under callgrind, per env, in the same unit: 130k instructions instrumented plus MuJoCo's
# physics run uninstrumented (~1.5 s a step of 64 envs here, as long as ~40M instrumented instructions).
_COLLECTOR_PER_ENV = 800_000
COLLECTOR_CALLS = 2  # measured collector steps (each ~2 s of 64 envs under callgrind here)


def weight(cell: Cell, calls: int = CALLS) -> float:
    """Relative time of a cell under callgrind (instructions of its instrumented calls)."""
    if cell.kind == COLLECTOR:
        return _COLLECTOR_PER_ENV * cell.num_envs * (calls_for(cell, calls) + warm_for(cell))
    per_env = _PER_ENV.get((cell.task, cell.impl)) or _PER_ENV.get((cell.task, None), 5_000)
    return per_env * cell.num_envs * (calls_for(cell, calls) + warm_for(cell))


def calls_for(cell: Cell, calls: int = CALLS) -> int:
    """Measured calls of a cell: the NumPy reference takes one (a call of it at 32768 envs costs ~30 s under
    callgrind, and its count is as exact as any other); fused kernels take ``calls``; a collector cell takes
    ``COLLECTOR_CALLS`` steps."""
    if cell.kind == COLLECTOR:
        return min(calls, COLLECTOR_CALLS)
    return 1 if cell.impl == REFERENCE else calls


def warm_for(cell: Cell) -> int:
    """Instrumented calls before the measured ones, so the simulated cache holds the kernel's data: one for the
    fused kernels and every collector step; none for the reference's calls, whose arrays and temporaries are
    many times the simulated LL."""
    return 0 if cell.impl == REFERENCE and cell.kind == UPDATE_STATE else 1


def partition(cells: list[Cell], jobs: int) -> list[list[Cell]]:
    """Cells over ``jobs`` processes: the cells of one kernel (task, implementation) stay together, so each
    process compiles and loads only its own kernels; the heaviest kernel goes onto the lightest process."""
    kernels: dict[tuple[str, str], list[Cell]] = {}
    for cell in cells:
        kernels.setdefault((cell.task, cell.impl), []).append(cell)
    loads, groups = [0.0] * jobs, [[] for _ in range(jobs)]
    for group in sorted(kernels.values(), key=lambda g: sum(map(weight, g)), reverse=True):
        i = loads.index(min(loads))
        loads[i] += sum(map(weight, group))
        groups[i].extend(group)
    order = {c: k for k, c in enumerate(cells)}
    return [sorted(g, key=order.__getitem__) for g in groups if g]


def jobs_default() -> int:
    return max(1, len(os.sched_getaffinity(0)))


def measure(
    cells: list[Cell],
    *,
    calls: int = CALLS,
    jobs: int | None = None,
    timeout: float = 1500,
    keep: Path | None = None,
    cache_sim: bool = True,
) -> dict:
    """Every cell's cost, in ``jobs`` valgrind processes at once (callgrind counts are independent of load),
    all within ``timeout`` seconds; returns ``{"cells": [...], "seconds": {...}, ...}`` (``format`` FORMAT). A
    process that fails errs its own cells only, with its exit code and output. ``keep``: a new or empty
    directory to keep the callgrind dumps and logs in. Without ``cache_sim`` only instructions are counted
    (the cache metrics are None), in less time."""
    valgrind()  # fails early, with the install hint, when valgrind is missing
    check_target()
    deadline = time.monotonic() + timeout
    env = worker_env()
    groups = partition(cells, jobs or jobs_default())
    seconds: dict = {}
    with tempfile.TemporaryDirectory(prefix="fusegate-cost-") as tmp:
        out_dir = Path(keep) if keep else Path(tmp)
        out_dir.mkdir(parents=True, exist_ok=True)
        if any(out_dir.iterdir()):
            raise CostError(f"{out_dir} is not empty: give a new or empty directory to keep the dumps in")
        workers = []
        for i, group in enumerate(groups):
            spec = {
                "format": FORMAT,
                "cells": [{**asdict(c), "calls": calls_for(c, calls), "warm": warm_for(c)} for c in group],
            }
            (out_dir / f"cells.{i}.json").write_text(json.dumps(spec))
            workers.append(
                [
                    sys.executable,
                    "-m",
                    "gate.meter.cost.worker",
                    str(out_dir / f"cells.{i}.json"),
                    str(out_dir / f"report.{i}.json"),
                ]
            )
        t0 = time.perf_counter()
        fill = _run_all(
            [[*w, "--fill"] for w in workers],
            [out_dir / f"fill.{i}.log" for i in range(len(workers))],
            env=env,
            deadline=deadline,
        )
        seconds["fill"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        runs = _run_all(
            [[*callgrind_command(out_dir, i, cache_sim=cache_sim), *w] for i, w in enumerate(workers)],
            [out_dir / f"worker.{i}.log" for i in range(len(workers))],
            env=env,
            deadline=deadline,
        )
        seconds["valgrind"] = time.perf_counter() - t0
        errors: dict[str, str] = {}
        for i, group in enumerate(groups):
            problem = runs[i] and f"the callgrind worker {runs[i]}"
            if fill[i]:
                problem = f"the native compile for {TARGET['NUMBA_CPU_NAME']} {fill[i]}"
            try:
                report = json.loads((out_dir / f"report.{i}.json").read_text())
            except (OSError, ValueError):
                report = {"errors": {}, "seconds": {}}
                problem = problem or "the callgrind worker wrote no report"
            errors.update(report["errors"])
            seconds[f"worker {i}"] = report["seconds"]
            for cell in group:
                if problem and cell.label not in errors:
                    errors[cell.label] = problem
        costs = collect(out_dir, cells, errors)
    return {
        "format": FORMAT,
        "target": TARGET["NUMBA_CPU_NAME"],
        "cache": {k: list(v) for k, v in CACHE.items()} if cache_sim else None,
        "weights": WEIGHTS,
        "calls": calls,
        "jobs": len(groups),
        "valgrind": valgrind_version(),
        "seconds": seconds,
        "cells": [c.to_dict() for c in costs],
    }
