"""Machine and software fingerprints recorded with every result.

Read from ``/proc`` and ``/sys`` (Linux) without extra packages. The gate decides which of these make two
machines one kind (``gate.domain.machines.machine_id``); the host name stays on record.
"""

from __future__ import annotations

import functools
import os
import platform
import sys
from importlib import metadata
from pathlib import Path

from gate.meter.placement import numa_nodes

FINGERPRINT_VERSION = 1
_CPU_ROOT = Path("/sys/devices/system/cpu")
_NODE_ROOT = Path("/sys/devices/system/node")


def _read(path: Path, default: str = "") -> str:
    try:
        return path.read_text().strip()
    except OSError:
        return default


def _cpuinfo() -> dict[str, str]:
    """The first processor block of /proc/cpuinfo."""
    info: dict[str, str] = {}
    for line in _read(Path("/proc/cpuinfo")).splitlines():
        if not line.strip():
            if info:
                break
            continue
        key, _, value = line.partition(":")
        info.setdefault(key.strip(), value.strip())
    return info


def _topology() -> tuple[int, int]:
    """(physical cores, sockets) from sysfs topology."""
    cores, sockets = set(), set()
    for cpu in _CPU_ROOT.glob("cpu[0-9]*"):
        package = _read(cpu / "topology" / "physical_package_id", "0")
        sockets.add(package)
        cores.add((package, _read(cpu / "topology" / "core_id", cpu.name)))
    return len(cores) or (os.cpu_count() or 1), len(sockets) or 1


def _caches() -> list[dict]:
    caches = []
    for index in sorted((_CPU_ROOT / "cpu0" / "cache").glob("index[0-9]*")):
        caches.append(
            {
                "level": int(_read(index / "level", "0")),
                "type": _read(index / "type"),
                "size": _read(index / "size"),
                "shared_with_cpus": _read(index / "shared_cpu_list"),
            }
        )
    return caches


def _meminfo_kb(path: Path, key: str) -> int:
    """``key`` in kB from /proc/meminfo ('MemTotal: 123 kB') or a node's meminfo ('Node 0 MemTotal: 123 kB')."""
    for line in _read(path).splitlines():
        if key in line:
            return int(line.split(key, 1)[1].split()[0])
    return 0


def machine() -> dict:
    cpu = _cpuinfo()
    cores, sockets = _topology()
    nodes = {}
    for node, cpus in numa_nodes().items():
        mem_kb = _meminfo_kb(_NODE_ROOT / f"node{node}" / "meminfo", "MemTotal:")
        nodes[str(node)] = {"cpus": list(cpus), "memory_mb": mem_kb // 1024}
    return {
        "version": FINGERPRINT_VERSION,
        "hostname": platform.node(),
        "arch": platform.machine(),
        "cpu_model": cpu.get("model name", platform.processor()),
        "cpu_vendor": cpu.get("vendor_id", ""),
        "cpu_flags": sorted(cpu.get("flags", "").split()),
        "logical_cpus": os.cpu_count(),
        "physical_cores": cores,
        "sockets": sockets,
        "numa_nodes": nodes,
        "caches": _caches(),
        "ram_mb": _meminfo_kb(Path("/proc/meminfo"), "MemTotal:") // 1024,
        "kernel": platform.release(),
    }


def software(threading_layer: str | None = None) -> dict:
    import numba

    return {
        "version": FINGERPRINT_VERSION,
        "python": sys.version.split()[0],
        "numpy": version("numpy"),
        "numba": version("numba"),
        "llvmlite": version("llvmlite"),
        "mujoco": version("mujoco"),
        "numba_num_threads": numba.config.NUMBA_NUM_THREADS,
        "threading_layer": threading_layer,
        "valgrind": _valgrind(),  # the cost signal's instrument (gate.meter.cost)
        "thread_table": _thread_table(),  # the measured thread caps the kernels use (fusegate threads)
    }


def _thread_table() -> str | None:
    """A digest of the thread table the kernels read on this machine (None: they use the rule)."""
    import hashlib

    from kernels.kernel import thread_table, thread_table_path

    if not thread_table():
        return None
    return hashlib.sha256(thread_table_path().read_bytes()).hexdigest()[:16]


@functools.cache
def version(dist: str) -> str:
    """An installed distribution's version, read once per process (each read parses its METADATA file)."""
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


@functools.cache
def _valgrind() -> str:
    from gate.meter.cost.valgrind_tool import valgrind_version

    return valgrind_version()
