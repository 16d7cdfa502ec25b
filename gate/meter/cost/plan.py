"""How a cost pass spreads its cells over valgrind processes: each cell's calls, warm calls and weight."""

from __future__ import annotations

import os

from gate.meter import subject
from gate.meter.cost.cells import CALLS, COLLECTOR, UPDATE_STATE, Cell

# Instructions per env and call under callgrind of a kernel whose task's meter.py gives no weight for it
# (``COST_PER_ENV``: what balances the cells over the worker processes).
PER_ENV = 5_000


# A collector step under callgrind, per env, in the same unit: 130k instructions instrumented plus MuJoCo's
# physics run uninstrumented (~1.5 s a step of 64 envs here, as long as ~40M instrumented instructions).
_COLLECTOR_PER_ENV = 800_000
COLLECTOR_CALLS = 2  # measured collector steps (each ~2 s of 64 envs under callgrind here)


def weight(cell: Cell, calls: int = CALLS) -> float:
    """Relative time of a cell under callgrind (instructions of its instrumented calls)."""
    if cell.kind == COLLECTOR:
        return _COLLECTOR_PER_ENV * cell.num_envs * (calls_for(cell, calls) + warm_for(cell))
    per_env = subject.cost_per_env(cell.task, cell.impl) or PER_ENV
    return per_env * cell.num_envs * (calls_for(cell, calls) + warm_for(cell))


def calls_for(cell: Cell, calls: int = CALLS) -> int:
    """Measured calls of a cell: the task's reference takes one (a call of the NumPy reference at 32768 envs
    costs ~30 s under callgrind, and its count is as exact as any other); fused kernels take ``calls``; a
    collector cell takes ``COLLECTOR_CALLS`` steps."""
    if cell.kind == COLLECTOR:
        return min(calls, COLLECTOR_CALLS)
    return 1 if _reference(cell) else calls


def warm_for(cell: Cell) -> int:
    """Instrumented calls before the measured ones, so the simulated cache holds the kernel's data: one for the
    fused kernels and every collector step; none for the reference's calls, whose arrays and temporaries are
    many times the simulated LL."""
    return 0 if _reference(cell) and cell.kind == UPDATE_STATE else 1


def _reference(cell: Cell) -> bool:
    return cell.impl == subject.registry().reference(cell.task)


def partition(cells: list[Cell], jobs: int) -> list[list[Cell]]:
    """Cells over ``jobs`` native processes that compile them for the cost target (``fill``): the cells of one
    kernel (task, implementation) stay together, so each process compiles and loads only its own kernels; the
    heaviest kernel goes onto the lightest process."""
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


def by_kernel(cells: list[Cell]) -> list[list[Cell]]:
    """One measuring process per kernel (task, implementation: a child the callgrind process forks from a fixed
    state, ``worker.serve``), its cells in a fixed order, the heaviest kernel first. A call's count includes the interpreter's work around the kernel (about a third of a call at 256
    envs), and that work depends on what ran before in the process (the adaptive interpreter's specializations,
    dict layouts): a kernel measured after two others counted 0.48% more instructions per call at 256 envs than
    the same kernel measured alone. In a process of its own, forked from the same state, a kernel counts the same whether its cells
    are measured alone or in a whole pass, so a pass can reuse one kernel's stored cells and measure another's."""
    kernels: dict[tuple[str, str], list[Cell]] = {}
    for cell in cells:
        kernels.setdefault((cell.task, cell.impl), []).append(cell)
    return sorted((sorted(g) for g in kernels.values()), key=lambda g: sum(map(weight, g)), reverse=True)


def jobs_default() -> int:
    return max(1, len(os.sched_getaffinity(0)))
