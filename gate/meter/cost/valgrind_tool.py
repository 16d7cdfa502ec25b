"""valgrind for the cost pass: found (or installed), checked against the pinned target, its callgrind command,
and its dumps read into per-call metrics."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

TARGET = {"NUMBA_CPU_NAME": "x86-64-v3", "NUMBA_CPU_FEATURES": ""}
# A fixed simulated cache (size, associativity, line bytes), so a cost never depends on what valgrind reads
# from the host's cpuid (a VM here reports a 256 MiB direct-mapped LL).
CACHE = {"I1": (32768, 8, 64), "D1": (32768, 8, 64), "LL": (8 * 1024 * 1024, 16, 64)}
WEIGHTS = {"l1_hit": 1, "ll_hit": 5, "ram": 35}
INSTALL_HINT = (
    "install valgrind (Debian/Ubuntu: apt-get install valgrind; Fedora: dnf install valgrind), "
    "or set FUSEGATE_VALGRIND to its path"
)


class CostError(ValueError):
    """The cost pass could not run (no valgrind, a CPU without the pinned target): says what and what to do.
    A ValueError, so the command line prints it as an error at the boundary, not a traceback."""


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
