"""In-process kernel benchmark: warm, interleaved timing of implementations side by side, with a memory roofline.

For each cell (task, num_envs, threads) every implementation is checked against the reference on a copy of one
synthetic snapshot (which also warms the JIT; a failing implementation is reported, not timed), and is then
timed on that snapshot itself, shared by all of them, in rounds: every round runs each implementation once, in a fresh random
order, so drift on a shared machine hits all of them alike. A parallel array copy moving the same number of
bytes with the same thread count runs in the same rounds: the achieved bandwidth of a kernel is reported as a
fraction of it (the memory roofline of this machine, now).

Bytes moved per call: every array the kernel reads (spec E arrays it touches, whole) plus every array it writes
(outputs and state), each counted once; state is counted twice (read and written). Motion-library arrays are
counted once per call, not per env. Write-allocate traffic is not counted, neither for kernels nor for the copy
(which counts its source and destination once each), so the ratio compares like with like.
"""

from __future__ import annotations

import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field

import numba
import numpy as np
from numba import njit, prange

from gate.meter import parity, subject
from gate.meter.subject import make_inputs
from kernels.kernel import Kernel, resolve_threads

COPY = "copy"


@njit(parallel=True, cache=True)
def parallel_copy(src, dst):
    for i in prange(src.shape[0]):
        dst[i] = src[i]


def bytes_per_call(task: str, num_envs: int, frames: int | None = None) -> int:
    contract = subject.registry().contract(task)
    sizes = {
        s.name: int(np.prod(s.concrete_shape(num_envs=num_envs, frames=frames or 0))) * s.dtype.itemsize
        for s in (*contract.snapshot, *contract.outputs)
    }
    reads = sum(sizes[name] for name in subject.reads(task))
    writes = sum(sizes[s.name] for s in (*contract.state, *contract.outputs))
    return reads + writes


@dataclass(kw_only=True)
class Timing:
    """Samples of one implementation in one cell, in seconds per call."""

    impl: str
    threads: int
    samples: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)  # CPU seconds / wall seconds per sample
    first_call_s: float = float("nan")  # JIT compile or cache load + first run
    parity_ok: bool = True
    parity_detail: str = ""

    @property
    def median(self) -> float:
        return statistics.median(self.samples) if self.samples else float("nan")

    def quantile(self, q: float) -> float:
        return float(np.quantile(self.samples, q)) if self.samples else float("nan")


@dataclass(frozen=True, kw_only=True)
class CellResult:
    task: str
    num_envs: int
    threads: int
    bytes_per_call: int
    rows: tuple[dict, ...]

    def to_dict(self) -> dict:
        return asdict(self)


class _Runner:
    """One timed participant of a cell: a loaded kernel on its own snapshot, or the copy."""

    def __init__(self, timing: Timing, call: Callable[[], object], loops: int = 1):
        self.timing, self.call, self.loops = timing, call, loops

    def sample(self) -> None:
        cpu0, t0 = time.process_time(), time.perf_counter()
        for _ in range(self.loops):
            self.call()
        wall = time.perf_counter() - t0
        self.timing.samples.append(wall / self.loops)
        self.timing.cpu.append((time.process_time() - cpu0) / wall)


def _with_threads(threads: int, fn: Callable[[], object]) -> Callable[[], object]:
    def call() -> None:
        previous = numba.get_num_threads()
        numba.set_num_threads(threads)
        try:
            fn()
        finally:
            numba.set_num_threads(previous)

    return call


def _kernel_runner(task: str, impl: str, snap: dict, threads: int) -> _Runner:
    """Every implementation of a cell runs on the same snapshot arrays (parity runs on copies): a copy per
    implementation would put their inputs at different addresses, and the layout alone (cache-set and 4K
    aliasing between input and output streams) moved one kernel's time by several percent from run to run."""
    registry = subject.registry()
    kernel: Kernel = registry.load(task, impl, num_envs=next(iter(snap.values())).shape[0], threads=threads)
    timing = Timing(impl=impl, threads=kernel.threads)
    if impl != registry.reference(task):
        report = parity.compare_on(parity.copy(snap), task=task, impl=impl, threads=threads)
        if not report.ok:
            timing.parity_ok = False
            timing.parity_detail = ", ".join(a.name for a in report.arrays if not a.ok)
    t0 = time.perf_counter()
    kernel.update_state(snap)
    timing.first_call_s = time.perf_counter() - t0
    return _Runner(timing, lambda: kernel.update_state(snap))


def _copy_runner(nbytes: int, threads: int) -> _Runner:
    """A parallel copy whose source plus destination is ``nbytes`` (to the nearest 256 bytes)."""
    src = np.ones((max(1, nbytes // 2 // 256), 64), dtype=np.float32)
    dst = np.empty_like(src)
    call = _with_threads(threads, lambda: parallel_copy(src, dst))
    timing = Timing(impl=COPY, threads=threads)
    t0 = time.perf_counter()
    call()
    timing.first_call_s = time.perf_counter() - t0
    return _Runner(timing, call)


def run_cell(
    *,
    task: str,
    impls: Iterable[str],
    num_envs: int,
    threads: int,
    repeats: int,
    min_sample_s: float = 0.002,
    seed: int = 0,
    on_round: Callable[[], None] | None = None,
    baseline: str | None = None,
) -> CellResult:
    """Time ``impls`` and the copy in ``repeats`` interleaved rounds; returns one row per participant (paired
    against ``baseline``, default the declared one)."""
    baseline = baseline or subject.declaration().baseline
    snap = make_inputs(task, num_envs, seed)
    registry = subject.registry()
    frames = next((snap[s.name].shape[0] for s in registry.contract(task).snapshot if "T" in s.shape), None)
    nbytes = bytes_per_call(task, num_envs, frames)
    effective = resolve_threads(num_envs, threads)
    runners = [_kernel_runner(task, impl, snap, threads) for impl in impls]
    runners.append(_copy_runner(nbytes, effective))
    timed = [r for r in runners if r.timing.parity_ok]
    for r in timed:  # calibrate: each sample lasts at least min_sample_s
        r.sample()
        r.loops = max(1, int(np.ceil(min_sample_s / max(r.timing.samples.pop(), 1e-9))))
        r.timing.cpu.pop()
    rng = random.Random(seed)
    for _ in range(repeats):
        rng.shuffle(timed)
        for r in timed:
            r.sample()
        if on_round:
            on_round()
    return CellResult(
        task=task,
        num_envs=num_envs,
        threads=effective,
        bytes_per_call=nbytes,
        rows=tuple(
            _row(r.timing, runners, num_envs, nbytes, reference=registry.reference(task), baseline=baseline)
            for r in runners
        ),
    )


def _row(
    t: Timing, runners: list[_Runner], num_envs: int, nbytes: int, *, reference: str, baseline: str
) -> dict:
    by_impl = {r.timing.impl: r.timing for r in runners}
    median = t.median
    copy_bw = nbytes / by_impl[COPY].median
    ref = by_impl.get(reference)
    base = by_impl.get(baseline)
    return {
        "impl": t.impl,
        "threads": t.threads,
        "parity_ok": t.parity_ok,
        "parity_failed_arrays": t.parity_detail,
        "samples": len(t.samples),
        "ms_median": median * 1e3,
        "ms_p25": t.quantile(0.25) * 1e3,
        "ms_p75": t.quantile(0.75) * 1e3,
        "iqr_pct": 100 * (t.quantile(0.75) - t.quantile(0.25)) / median if t.samples else float("nan"),
        "menv_steps_per_s": num_envs / median / 1e6 if t.impl != COPY else float("nan"),
        "speedup_vs_reference": (ref.median / median)
        if ref and ref.samples and t.impl != COPY
        else float("nan"),
        # Paired: the median over rounds of this round's time over the baseline's in the same round.
        **_paired_ratio(t, base),
        "gb_per_s": nbytes / median / 1e9,
        "pct_of_copy": 100 * (nbytes / median) / copy_bw,
        "cpu_util": statistics.median(t.cpu) if t.cpu else float("nan"),
        "first_call_ms": t.first_call_s * 1e3,
    }


def _paired_ratio(t: Timing, base: Timing | None) -> dict:
    if base is None or t.impl in (COPY, base.impl) or not t.samples or len(base.samples) != len(t.samples):
        return {"vs_baseline": float("nan"), "vs_baseline_p25": float("nan"), "vs_baseline_p75": float("nan")}
    ratios = np.array(t.samples) / np.array(base.samples)
    p25, median, p75 = np.quantile(ratios, [0.25, 0.5, 0.75])
    return {"vs_baseline": float(median), "vs_baseline_p25": float(p25), "vs_baseline_p75": float(p75)}


_JIT_PROBE = """
import json, sys, time
t0 = time.perf_counter()
from gate.meter import subject
registry = subject.registry()
import kernels.kernel
t_import = time.perf_counter() - t0
snap = subject.make_inputs(sys.argv[1], 64, 0)
t1 = time.perf_counter()
k = registry.load(sys.argv[1], sys.argv[2], num_envs=64)
t2 = time.perf_counter()
k.update_state(snap)
t3 = time.perf_counter()
k.update_state(snap)
t4 = time.perf_counter()
print(json.dumps({"import_s": t_import, "load_s": (t2 - t1) + (t3 - t2) - (t4 - t3)}))
"""


def jit_times(task: str, impl: str) -> dict:
    """Compile time (empty Numba cache) and cache-load time (the same cache, a second fresh process) of
    ``impl``: seconds from the registry's ``load`` to the end of the first call, less one warm call, each in a
    fresh process, so neither is mixed into steady-state time. Import time of the registry, its tasks and the
    kernel base (Numba) is reported apart."""
    with tempfile.TemporaryDirectory(prefix="fusegate-jit-") as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache}
        runs = []
        for _ in range(2):
            out = subprocess.run(
                [sys.executable, "-c", _JIT_PROBE, task, impl],
                capture_output=True,
                text=True,
                env=env,
                check=True,
            )
            runs.append(json.loads(out.stdout))
    return {
        "task": task,
        "impl": impl,
        "compile_s": runs[0]["load_s"],
        "cache_load_s": runs[1]["load_s"],
        "import_s": runs[1]["import_s"],
    }


def machine_summary() -> dict:
    """A short description of where the numbers were taken (the full fingerprint comes with placement)."""
    model = ""
    try:
        with open("/proc/cpuinfo") as f:
            model = next((ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")), "")
    except OSError:
        pass
    try:
        layer = numba.threading_layer()
    except ValueError:  # no parallel region has run yet
        layer = "not yet chosen"
    return {
        "cpu": model,
        "cpus_usable": len(os.sched_getaffinity(0)),
        "numba": numba.__version__,
        "numpy": np.__version__,
        "threading_layer": layer,
    }
