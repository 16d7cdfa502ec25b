"""Shared setup of the asv suites: the profile's grid, placement, snapshots and the results sidecar.

Profiles (``FUSEGATE_BENCH_PROFILE``): ``quick`` (the default) is two scales at 1 thread and at the placement's
full thread count, so ``asv continuous main HEAD`` finishes in minutes on a 2-core machine; ``full`` is 2^11 ...
2^18 envs over every power-of-two thread count the placement allows. The 1-thread cells are the quiet ones on a
shared machine: a 2-thread kernel on 2 cores stalls whenever a neighbour takes a core (an asv A/A moved 2-thread
cells by up to 1.5x, and a 15-20% slowdown of the hand-written kernel went unseen at 2 threads).
``FUSEGATE_BENCH_THREADS`` overrides the thread list (e.g. ``1,8,16,32``); ``FUSEGATE_BENCH_TASKS``,
``FUSEGATE_BENCH_IMPLS`` and ``FUSEGATE_BENCH_ENVS`` narrow the other axes (the scenario harness uses them). The placement comes from the
``FUSEGATE_*`` variables (``kernels.placement``) and is applied in every benchmark process before any array is
allocated; what was asked and what the OS granted is written, with the machine and software fingerprints, to a
sidecar next to asv's results, so every stored result can be traced back to where it ran.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import kernels
from kernels import fingerprint, parity, registry
from kernels.placement import AppliedPlacement, Placement, first_touch

PROFILE = os.environ.get("FUSEGATE_BENCH_PROFILE", "quick")
if PROFILE not in ("quick", "full"):
    raise ValueError(f"FUSEGATE_BENCH_PROFILE must be quick or full, got {PROFILE!r}")
SIDECAR_FORMAT = 1
ROOT = Path(__file__).resolve().parents[1]  # the asv config directory (benchmark_dir is ./benchmarks)


def _threads() -> list[int]:
    override = os.environ.get("FUSEGATE_BENCH_THREADS")
    if override:
        return [int(t) for t in override.split(",")]
    cpus = len(os.sched_getaffinity(0))
    if PROFILE == "quick":
        return sorted({1, cpus})
    return [t for t in (1, 2, 4, 8, 16, 32, 64, 128) if t <= cpus]


def override(name: str, default: list, allowed=None, kind=str) -> list:
    """A profile's grid axis, or the comma-separated list in ``name`` (e.g. for a narrowed scenario run)."""
    text = os.environ.get(name)
    if not text:
        return default
    values = [kind(v) for v in text.split(",")]
    unknown = [v for v in values if allowed is not None and v not in allowed]
    if unknown:
        raise ValueError(f"{name}: unknown {', '.join(map(str, unknown))}; known: {', '.join(allowed)}")
    return values


TASKS = override("FUSEGATE_BENCH_TASKS", list(kernels.TASKS), kernels.TASKS)
IMPLS = override("FUSEGATE_BENCH_IMPLS", list(kernels.IMPLS), kernels.IMPLS)
NUM_ENVS = override(
    "FUSEGATE_BENCH_ENVS", [4096, 32768] if PROFILE == "quick" else [2**k for k in range(11, 19)], kind=int
)
THREADS = _threads()
PAIRS = 40 if PROFILE == "quick" else 60
# The track_ suites (bandwidth and CPU metrics, JIT times, paired ratios) are single values per process: asv
# compares them by its factor alone, with no statistics, and on a shared machine they moved by 10-70% between
# two runs of the same commit (an A/A `asv continuous` flagged 9 of them). They are recorded for the gate, which
# judges them with confidence intervals; `asv continuous` in the quick profile judges steady-state time only.
TRACKS = os.environ.get("FUSEGATE_BENCH_TRACKS", "1" if PROFILE == "full" else "0") == "1"

_applied: AppliedPlacement | None = None


def place() -> AppliedPlacement:
    """Apply the environment's placement once per process (before any array exists) and return it."""
    global _applied
    if _applied is None:
        _applied = Placement.from_env().apply()
        write_sidecar("placement", {})  # every benchmark process records where it ran
    return _applied


def require(task: str, impl: str, threads: int) -> AppliedPlacement:
    """Skip (asv's NotImplementedError) what does not exist or what this placement cannot run."""
    if impl not in registry.available(task):
        raise NotImplementedError(f"{impl} has no {task} kernel")
    applied = place()
    if threads > len(applied.cpus):
        raise NotImplementedError(f"threads={threads} > {len(applied.cpus)} CPUs of the placement")
    return applied


def snapshot(task: str, num_envs: int, threads: int) -> dict:
    """A synthetic snapshot whose pages were first touched by ``threads`` threads laid out like the kernel's."""
    import numba

    previous = numba.get_num_threads()
    numba.set_num_threads(min(threads, previous))
    try:
        return first_touch(kernels.make_inputs(task, num_envs, seed=0))
    finally:
        numba.set_num_threads(previous)


def checked_kernel(task: str, impl: str, num_envs: int, threads: int, snap: dict):
    """The kernel, after a parity check against the reference on this snapshot (which also warms the JIT).

    A failing implementation raises, so asv reports the benchmark as failed instead of timing it; the exception
    goes to the sidecar first (asv keeps no exception text in its results), so the gate's row can name it.
    """
    try:
        if impl != registry.REFERENCE:
            report = parity.compare_on(kernels.copy_snapshot(snap), task=task, impl=impl, threads=threads)
            if not report.ok:
                bad = ", ".join(f"{a.name} (max abs {a.max_abs:.3g})" for a in report.arrays if not a.ok)
                raise RuntimeError(f"{task}/{impl} fails parity with the NumPy reference: {bad}")
        kernel = kernels.load(task, impl, num_envs=num_envs, threads=threads)
        kernel.update_state(snap)
    except Exception as exc:
        message = f"{type(exc).__name__}: {exc}"[:2000]
        cell = {"task": task, "impl": impl, "num_envs": num_envs, "threads": threads}
        write_sidecar("failure", {**cell, "message": message})
        raise
    return kernel


def sidecar_line(kind: str, record: dict, *, commit: str, env: str, applied: AppliedPlacement) -> dict:
    """One sidecar record (format SIDECAR_FORMAT): placement, fingerprints and the measurement."""
    return {
        "format": SIDECAR_FORMAT,
        "kind": kind,
        "commit": commit,
        "env": env,
        "profile": PROFILE,
        "time": time.time(),
        "pid": os.getpid(),
        "placement": applied.to_dict(),
        "machine": fingerprint.machine(),
        "software": fingerprint.software(applied.layer),
        **record,
    }


def measured_commit() -> str:
    """The commit this benchmark process measures.

    asv 0.6 does not pass ``ASV_COMMIT`` to benchmark processes; it records the commit it installed in the
    environment's ``asv-install-status.json`` (the environment is ``sys.prefix``). With ``-E existing`` there is
    no such file and the driver sets ``ASV_COMMIT`` itself (``fusegate run`` does).
    """
    if os.environ.get("ASV_COMMIT"):
        return os.environ["ASV_COMMIT"]
    try:
        return json.loads((Path(sys.prefix) / "asv-install-status.json").read_text())["commit_hash"]
    except (OSError, ValueError, KeyError, TypeError):
        return "working-tree"


def write_sidecar(kind: str, record: dict) -> Path:
    """Append one JSON line for the commit asv is measuring to ``.asv/fusegate/<commit>/<kind>.jsonl``."""
    commit = measured_commit()
    env = os.environ.get("ASV_ENV_NAME") or Path(sys.prefix).name
    line = sidecar_line(kind, record, commit=commit, env=env, applied=place())
    directory = ROOT / ".asv" / "fusegate" / commit[:8]
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{kind}.jsonl"
    with open(path, "a") as f:  # asv runs one benchmark process at a time
        f.write(json.dumps(line) + "\n")
    return path
