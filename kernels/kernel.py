"""The loaded-kernel object every implementation returns from ``kernels.load``.

A kernel owns its outputs (allocated once at load) and, for the fused implementations, its per-thread
scratch. ``update_state`` checks the snapshot against the task contract before touching anything, runs one
step and returns the output dict (the same arrays every call: copy what you want to keep).
"""

from __future__ import annotations

import functools
import json
import os
from abc import ABC, abstractmethod
from collections.abc import Mapping
from pathlib import Path

import numba
import numpy as np

import kernels._cache  # noqa: F401  (Numba's cache is configured before a kernel is defined)
from kernels.contract import TaskContract
from kernels.spec import TaskPlan

# Thread cap: a fused kernel uses at most one thread per MIN_ENVS_PER_THREAD envs. Below that, waking another
# thread costs more than the envs it takes over (docs/development.md). Measured with the cap lifted:
#   FUSEGATE_MIN_ENVS_PER_THREAD=1 fusegate kernels bench --task g1_walk --impl handwritten \
#       --num-envs 8,16,32,64,128 --threads 1,2 --repeats 50
# On the 2-core development machine 2 threads tie 1 thread at 16 envs and win by 12% at 32 envs. The variable
# overrides the rule for machines where waking a thread costs more (many sockets, SMT).
MIN_ENVS_PER_THREAD = int(os.environ.get("FUSEGATE_MIN_ENVS_PER_THREAD", "16"))
# A measured table of the best thread count per task, implementation and scale on this machine (written by
# ``fusegate threads --write``) replaces the rule above where it has an answer. Its path: FUSEGATE_THREAD_TABLE,
# else ~/.config/fusegate/threads.json. A table of another machine (its "machine" key is not this one's) is not used.
THREAD_TABLE_FORMAT = 1

CACHE_LINE_BYTES = 64


def max_threads() -> int:
    """Threads Numba may use in this process (NUMBA_NUM_THREADS, itself capped by the CPU affinity)."""
    return numba.config.NUMBA_NUM_THREADS


def thread_cap(num_envs: int) -> int:
    return max(1, min(max_threads(), num_envs // MIN_ENVS_PER_THREAD))


def machine_key() -> str:
    """What a thread table must be measured on: the CPU model and the logical CPUs (as ``gate.meter.fingerprint``
    records them)."""
    model = ""
    try:
        with open("/proc/cpuinfo") as f:
            model = next((ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")), "")
    except OSError:
        pass
    return f"{model} x{os.cpu_count()}"


def thread_table_path() -> Path:
    configured = os.environ.get("FUSEGATE_THREAD_TABLE")
    if configured:
        return Path(configured)
    return Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config") / "fusegate" / "threads.json"


@functools.cache
def thread_table() -> dict:
    """{task: {impl: {num_envs: threads}}} measured on this machine, or {} (no table, another machine's, unreadable)."""
    try:
        data = json.loads(thread_table_path().read_text())
    except (OSError, ValueError):
        return {}
    if (
        not isinstance(data, dict)
        or data.get("format") != THREAD_TABLE_FORMAT
        or data.get("machine") != machine_key()
    ):
        return {}
    table = data.get("table")
    return table if isinstance(table, dict) else {}


def table_threads(task: str, impl: str, num_envs: int) -> int | None:
    """The table's count for the largest measured scale at or below ``num_envs`` (the smallest one above it when
    none is below), or None."""
    by_n = thread_table().get(task, {}).get(impl, {})
    try:
        scales = sorted((int(n), int(t)) for n, t in by_n.items())
    except (TypeError, ValueError):
        return None
    if not scales:
        return None
    below = [t for n, t in scales if n <= num_envs]
    return below[-1] if below else scales[0][1]


def resolve_threads(num_envs: int, requested: int | None, *, task: str = "", impl: str = "") -> int:
    """The thread count a fused kernel runs with: the caller's request, capped by N; without a request, this
    machine's thread table for the task, implementation and scale, else the rule (all threads, capped by N)."""
    if requested is None:
        measured = table_threads(task, impl, num_envs) if task else None
        if measured is not None:
            return max(1, min(max_threads(), measured))
        return thread_cap(num_envs)
    if isinstance(requested, bool) or not isinstance(requested, int | np.integer) or requested < 1:
        raise ValueError(f"threads must be a positive integer, got {requested!r}")
    if requested > max_threads():
        raise ValueError(
            f"threads={requested} exceeds the {max_threads()} threads Numba can use in this process; "
            "lower it or raise NUMBA_NUM_THREADS before starting Python"
        )
    return min(int(requested), thread_cap(num_envs))


def padded_scratch(rows: int, cols: int) -> np.ndarray:
    """A float64 (rows, cols') array whose rows start on their own cache lines (no false sharing)."""
    per_line = CACHE_LINE_BYTES // 8
    padded = -(-cols // per_line) * per_line
    raw = np.zeros(rows * padded + per_line, dtype=np.float64)
    start = (-raw.ctypes.data % CACHE_LINE_BYTES) // 8
    return raw[start : start + rows * padded].reshape(rows, padded)


class Kernel(ABC):
    """One implementation of one task, loaded for a fixed number of envs. ``impl`` is the implementation's name in
    its task's spec; the registry passes it (``kernels.registry.Registry.load``)."""

    impl: str
    parallel: bool = False

    def __init__(
        self, contract: TaskContract, *, plan: TaskPlan, num_envs: int, threads: int | None, impl: str = ""
    ):
        if isinstance(num_envs, bool) or not isinstance(num_envs, int | np.integer) or num_envs < 1:
            raise ValueError(
                f"num_envs must be a positive integer (N = 0 is out of contract), got {num_envs!r}"
            )
        if plan.task != contract.task:
            raise ValueError(f"a {plan.task} plan cannot drive a {contract.task} kernel")
        self.impl = impl
        self.plan = plan
        self.contract = contract.for_plan(plan)
        self.task = contract.task
        self.num_envs = int(num_envs)
        self.noise_level = plan.noise_level
        self.threads = (
            resolve_threads(self.num_envs, threads, task=contract.task, impl=self.impl)
            if self.parallel
            else 1
        )
        self.outputs = self.contract.allocate_outputs(num_envs=self.num_envs)

    def update_state(
        self, snap: Mapping[str, np.ndarray], *, check_layout: bool = True
    ) -> dict[str, np.ndarray]:
        """One step over all N envs; returns the outputs.

        ``check_layout=False`` skips the per-array checks of names, shapes, dtypes, contiguity and writability
        and keeps the checks of values (motion-frame indexes). It is for a caller that owns fixed snapshot
        buffers, checked once by a call with the default, as the collector does; a snapshot of another layout
        passed with it is undefined behaviour.
        """
        if check_layout:
            self.contract.check_snapshot(snap, num_envs=self.num_envs)
        else:
            self.contract.check_values(snap, num_envs=self.num_envs)
        previous = numba.get_num_threads() if self.parallel else self.threads
        if previous == self.threads:  # already right (a collector sets it once): one numba call, not three
            self._run(snap, self.outputs)
            return self.outputs
        numba.set_num_threads(self.threads)
        try:
            self._run(snap, self.outputs)
        finally:
            numba.set_num_threads(previous)
        return self.outputs

    @abstractmethod
    def _run(self, snap: Mapping[str, np.ndarray], out: dict[str, np.ndarray]) -> None: ...

    def require_default_plan(self, default: TaskPlan) -> None:
        """Refuse any plan but ``default`` (whatever its noise level): for kernels written for one plan."""
        if self.plan.replace(noise_level=default.noise_level) != default:
            raise ValueError(
                f"the {self.impl} {self.task} kernel implements only the default plan (spec E), not plan "
                f"{self.plan.hash[:12]}; load impl='assembled' or 'assembled_generic' for other plans"
            )

    def __repr__(self) -> str:
        return f"<{self.task} {self.impl} N={self.num_envs} threads={self.threads}>"
