"""Where a benchmark runs: CPU set, NUMA memory policy, thread count and Numba threading layer.

A placement is part of a result's identity (docs/fleet.md): it is parsed from a string or from the environment,
applied inside the benchmark process before any array is allocated, and recorded twice, as asked and as the
OS granted it. A placement this machine cannot satisfy is refused with an error saying what is available.

    FUSEGATE_CPUS=0-39 FUSEGATE_MEMPOLICY=bind:0 FUSEGATE_THREADS=16 FUSEGATE_THREADING_LAYER=omp
    Placement.parse("cpus=0-39 mem=bind:0 threads=16 layer=omp")

Memory policy goes through ``set_mempolicy(2)``: libnuma's wrapper when the library is present, the raw system
call otherwise (no root and no numactl binary needed). It binds the calling thread; Numba's worker threads,
started at the first parallel call, inherit both the CPU mask and the memory policy.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import platform
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path

import numba
import numpy as np
from numba import njit, prange

from gate.meter import topology
from gate.meter.topology import format_cpu_list

MODES = {"default": 0, "preferred": 1, "bind": 2, "interleave": 3, "local": 4}
LAYERS = ("omp", "tbb", "workqueue")
ENV_KEYS = {
    "cpus": "FUSEGATE_CPUS",
    "mem": "FUSEGATE_MEMPOLICY",
    "threads": "FUSEGATE_THREADS",
    "layer": "FUSEGATE_THREADING_LAYER",
}
_SYSCALLS = {"x86_64": (238, 239), "aarch64": (237, 236)}  # (set_mempolicy, get_mempolicy)
_NODE_ROOT = Path("/sys/devices/system/node")


class PlacementError(ValueError):
    """A placement that cannot be parsed or that this machine cannot satisfy."""


def parse_cpu_list(text: str) -> tuple[int, ...]:
    """'0-3,8,10-11' -> (0, 1, 2, 3, 8, 10, 11), the kernel's cpulist format; a PlacementError says what is wrong."""
    try:
        return topology.parse_cpu_list(text)
    except ValueError as exc:
        raise PlacementError(str(exc)) from None


@dataclass(frozen=True, kw_only=True)
class MemPolicy:
    mode: str = "default"
    nodes: tuple[int, ...] = ()

    @classmethod
    def parse(cls, text: str) -> MemPolicy:
        mode, _, nodes = text.strip().partition(":")
        if mode not in MODES:
            raise PlacementError(
                f"unknown memory policy {mode!r}; use one of {', '.join(MODES)} (e.g. bind:0)"
            )
        node_ids = parse_cpu_list(nodes) if nodes else ()
        if mode in ("bind", "interleave", "preferred") and not node_ids:
            raise PlacementError(f"memory policy {mode!r} needs NUMA nodes, e.g. {mode}:0 or {mode}:0,1")
        if mode in ("default", "local") and node_ids:
            raise PlacementError(f"memory policy {mode!r} takes no nodes, got {nodes!r}")
        if mode == "preferred" and len(node_ids) != 1:
            raise PlacementError(f"memory policy 'preferred' takes one node, got {nodes!r}")
        return cls(mode=mode, nodes=node_ids)

    def __str__(self) -> str:
        return f"{self.mode}:{format_cpu_list(self.nodes)}" if self.nodes else self.mode


@dataclass(frozen=True, kw_only=True)
class Placement:
    """What a benchmark process asks for. ``None`` fields inherit what the process already has."""

    cpus: tuple[int, ...] | None = None
    mem: MemPolicy | None = None
    threads: int | None = None
    layer: str | None = None

    @classmethod
    def parse(cls, text: str) -> Placement:
        """'cpus=0-39 mem=bind:0 threads=16 layer=omp' (any subset, space-separated)."""
        fields: dict[str, str] = {}
        for item in text.split():
            key, sep, value = item.partition("=")
            if not sep or key not in ENV_KEYS:
                raise PlacementError(
                    f"bad placement item {item!r}; use key=value with keys {', '.join(ENV_KEYS)}"
                )
            fields[key] = value
        return cls._from_fields(fields)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Placement:
        environ = os.environ if environ is None else environ
        return cls._from_fields({k: environ[v] for k, v in ENV_KEYS.items() if environ.get(v)})

    @classmethod
    def _from_fields(cls, fields: Mapping[str, str]) -> Placement:
        threads = fields.get("threads")
        if threads is not None and (not threads.isdigit() or int(threads) < 1):
            raise PlacementError(f"threads must be a positive integer, got {threads!r}")
        layer = fields.get("layer")
        if layer is not None and layer not in LAYERS:
            raise PlacementError(f"unknown threading layer {layer!r}; use one of {', '.join(LAYERS)}")
        return cls(
            cpus=parse_cpu_list(fields["cpus"]) if "cpus" in fields else None,
            mem=MemPolicy.parse(fields["mem"]) if "mem" in fields else None,
            threads=int(threads) if threads is not None else None,
            layer=layer,
        )

    def __str__(self) -> str:
        items = []
        if self.cpus is not None:
            items.append(f"cpus={format_cpu_list(self.cpus)}")
        if self.mem is not None:
            items.append(f"mem={self.mem}")
        if self.threads is not None:
            items.append(f"threads={self.threads}")
        if self.layer is not None:
            items.append(f"layer={self.layer}")
        return " ".join(items) or "inherit"

    def apply(self) -> AppliedPlacement:
        """Apply to this process (call before allocating arrays or running a parallel kernel)."""
        available = os.sched_getaffinity(0)
        if self.cpus is not None:
            missing = sorted(set(self.cpus) - available)
            if missing:
                raise PlacementError(
                    f"CPUs {format_cpu_list(tuple(missing))} are not available to this process "
                    f"(allowed: {format_cpu_list(tuple(sorted(available)))}); choose CPUs from that set"
                )
            os.sched_setaffinity(0, self.cpus)
        granted_cpus = tuple(sorted(os.sched_getaffinity(0)))
        if self.mem is not None:
            _set_mempolicy(self.mem)
        if self.layer is not None:
            _select_layer(self.layer)
        threads = (
            self.threads
            if self.threads is not None
            else min(len(granted_cpus), numba.config.NUMBA_NUM_THREADS)
        )
        if threads > len(granted_cpus):
            raise PlacementError(
                f"threads={threads} is more than the {len(granted_cpus)} CPUs of this placement "
                f"({format_cpu_list(granted_cpus)}): oversubscribed threads make timings meaningless"
            )
        if threads > numba.config.NUMBA_NUM_THREADS:
            raise PlacementError(
                f"threads={threads} exceeds NUMBA_NUM_THREADS={numba.config.NUMBA_NUM_THREADS}; "
                "set NUMBA_NUM_THREADS before Python starts"
            )
        _start_pool(threads)
        return AppliedPlacement(
            asked=self,
            cpus=granted_cpus,
            mem=get_mempolicy(),
            threads=numba.get_num_threads(),
            layer=numba.threading_layer(),
        )


@dataclass(frozen=True, kw_only=True)
class AppliedPlacement:
    """A placement as asked and as granted (read back from the OS and from Numba)."""

    asked: Placement
    cpus: tuple[int, ...]
    mem: MemPolicy
    threads: int
    layer: str

    def to_dict(self) -> dict:
        return {
            "asked": str(self.asked),
            "granted": {
                "cpus": format_cpu_list(self.cpus),
                "mem": str(self.mem),
                "threads": self.threads,
                "layer": self.layer,
            },
            "asked_fields": asdict(self.asked),
        }


# --- memory policy through set_mempolicy(2) / get_mempolicy(2) ------------------------------------------


def numa_nodes() -> dict[int, tuple[int, ...]]:
    """NUMA node -> its CPUs, from sysfs (a machine without NUMA reports one node 0 with every CPU)."""
    nodes = topology.node_cpus(_NODE_ROOT)
    return nodes or {0: tuple(sorted(os.sched_getaffinity(0)))}


def _nodemask(nodes: tuple[int, ...]) -> tuple[ctypes.Array, int]:
    bits = 8 * ctypes.sizeof(ctypes.c_ulong)
    maxnode = max(max(nodes, default=0) + 1, 64)
    words = (ctypes.c_ulong * (-(-maxnode // bits)))()
    for n in nodes:
        words[n // bits] |= 1 << (n % bits)
    return words, maxnode + 1  # the kernel reads maxnode - 1 bits


def _mempolicy_call(name: str):
    libnuma = ctypes.util.find_library("numa")
    if libnuma:
        fn = getattr(ctypes.CDLL(libnuma, use_errno=True), name)
        return lambda *args: fn(*args)
    numbers = _SYSCALLS.get(platform.machine())
    if numbers is None:
        raise PlacementError(f"memory policies are not supported on {platform.machine()} without libnuma")
    libc = ctypes.CDLL(None, use_errno=True)
    number = numbers[0] if name == "set_mempolicy" else numbers[1]
    return lambda *args: libc.syscall(ctypes.c_long(number), *args)


def _set_mempolicy(policy: MemPolicy) -> None:
    known = numa_nodes()
    unknown = [n for n in policy.nodes if n not in known]
    if unknown:
        raise PlacementError(
            f"NUMA node(s) {format_cpu_list(tuple(unknown))} do not exist here "
            f"(nodes: {format_cpu_list(tuple(known))}); choose from those"
        )
    mask, maxnode = _nodemask(policy.nodes)
    call = _mempolicy_call("set_mempolicy")
    if policy.nodes:
        rc = call(ctypes.c_int(MODES[policy.mode]), mask, ctypes.c_ulong(maxnode))
    else:
        rc = call(ctypes.c_int(MODES[policy.mode]), None, ctypes.c_ulong(0))
    if rc != 0:
        err = ctypes.get_errno()
        raise PlacementError(f"set_mempolicy({policy}) failed: {os.strerror(err)}")


def get_mempolicy() -> MemPolicy:
    """The calling thread's memory policy, read back from the kernel."""
    mode = ctypes.c_int(-1)
    mask, maxnode = _nodemask(tuple(range(max(numa_nodes()) + 1)))
    for i in range(len(mask)):
        mask[i] = 0
    rc = _mempolicy_call("get_mempolicy")(
        ctypes.byref(mode), mask, ctypes.c_ulong(maxnode), None, ctypes.c_ulong(0)
    )
    if rc != 0:
        raise PlacementError(f"get_mempolicy failed: {os.strerror(ctypes.get_errno())}")
    bits = 8 * ctypes.sizeof(ctypes.c_ulong)
    nodes = tuple(n for n in range(maxnode - 1) if mask[n // bits] >> (n % bits) & 1)
    name = {v: k for k, v in MODES.items()}.get(mode.value & 0xFF, str(mode.value))
    return MemPolicy(mode=name, nodes=nodes if name not in ("default", "local") else ())


# --- Numba threading layer and first touch ---------------------------------------------------------------


@njit(parallel=True, cache=True)
def _touch(dst, src):
    for i in prange(src.shape[0]):
        dst[i] = src[i]


def _select_layer(layer: str) -> None:
    try:
        current = numba.threading_layer()
    except ValueError:  # no parallel region has run yet: the layer can still be chosen
        numba.config.THREADING_LAYER = layer
        return
    if current != layer:
        raise PlacementError(
            f"threading layer {layer!r} asked after Numba already started {current!r}; "
            "apply the placement before any parallel kernel runs (or set NUMBA_THREADING_LAYER)"
        )


@njit(cache=True)
def _first(a):
    return a[0]


def prepare_fork() -> None:
    """Initialise Numba's CPU target (LLVM and its code library) in a process that will fork benchmark processes,
    without starting a threading layer (GNU OpenMP aborts a child forked after it starts): each child then
    loads its cached kernels and starts its pool in about 0.02 s instead of 0.4-0.5 s."""
    _first(np.zeros(1))


def _start_pool(threads: int) -> None:
    """Start Numba's worker pool now, so it inherits this placement (and a missing layer fails here)."""
    try:
        numba.set_num_threads(threads)
        _touch(np.empty(64), np.zeros(64))
    except ValueError as exc:
        layer = numba.config.THREADING_LAYER
        raise PlacementError(
            f"Numba could not start threading layer {layer!r} ({str(exc).splitlines()[0]}); "
            "install it or choose another with FUSEGATE_THREADING_LAYER"
        ) from None


LAYOUT_SPAN = 4096  # bytes: a random offset within one page moves an array over every cache set and bank
LAYOUT_ALIGN = 64  # bytes: offsets keep cache-line alignment (what an allocator gives large arrays)


def _empty_at(arr: np.ndarray, offset: int) -> np.ndarray:
    """An uninitialised C-contiguous array like ``arr`` starting ``offset`` bytes into a fresh buffer."""
    buffer = np.empty(arr.nbytes + LAYOUT_SPAN + LAYOUT_ALIGN, dtype=np.uint8)
    start = -buffer.ctypes.data % LAYOUT_ALIGN + offset  # from a cache-line boundary, then ``offset``
    return buffer[start : start + arr.nbytes].view(arr.dtype).reshape(arr.shape)


def first_touch(
    snap: Mapping[str, np.ndarray], *, rng: np.random.Generator | None = None
) -> dict[str, np.ndarray]:
    """Copies of ``snap`` whose pages were first written by the threads that will process their rows.

    Numba's prange splits rows statically and evenly across threads, as the fused kernels do, so each page
    lands on the NUMA node of the thread that later reads it (under a ``local`` or ``default`` policy).

    With ``rng``, every array starts at its own random cache-line offset within a page: the relative placement
    of the arrays (which cache sets they share, 4 KiB aliasing between loads and stores) then differs from
    process to process, so a benchmark's processes average over layouts instead of all inheriting one
    (Mytkowicz et al., ASPLOS 2009; Curtsinger and Berger's Stabilizer, ASPLOS 2013).
    """
    out = {}
    for name, arr in snap.items():
        if rng is None:
            dst = np.empty_like(arr)
        else:
            dst = _empty_at(arr, int(rng.integers(LAYOUT_SPAN // LAYOUT_ALIGN)) * LAYOUT_ALIGN)
        if arr.ndim >= 1 and arr.shape[0] > 0:
            _touch(dst.reshape(arr.shape[0], -1), arr.reshape(arr.shape[0], -1))
        out[name] = dst
    return out
