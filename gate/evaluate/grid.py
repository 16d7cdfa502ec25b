"""Where the baseline was timed: the cells an implementation is compared at."""

from __future__ import annotations

import math

from gate.domain.benchmarks import COLLECTOR_PHASES, TIME
from gate.domain.vocabulary import Status
from gate.evaluate.cells import Cells, Summary
from gate.policy import Policy


def timed(cells: Cells, impl: str, baseline: str, policy: Policy) -> list[tuple[str, int, int]]:
    """Every (task, num_envs, threads) the baseline was timed at, for the tasks ``impl`` was measured on at all."""
    tasks = {k.task for k in cells if k.impl == impl}
    base = {
        (k.task, k.num_envs, k.threads) for k, _ in cells.of(TIME) if k.impl == baseline and k.task in tasks
    }
    return sorted(k for k in base if not policy.threads or k[2] in policy.threads)


def fastest(cells: Cells, task: str, impl: str, n: int, policy: Policy) -> Summary | None:
    """``impl``'s timed cell at its fastest thread count (among the policy's), at ``n`` envs."""
    ok = [
        c
        for k, c in cells.of(TIME)
        if (k.task, k.impl, k.num_envs) == (task, impl, n)
        and c.status == Status.OK
        and (not policy.threads or k.threads in policy.threads)
    ]
    return min(ok, key=lambda c: c.center, default=None)


def phases(cells: Cells, task: str, impl: str, n: int, t: int) -> str:
    """Physics, the kernel and the rest of a collector step per env-step (medians over its processes)."""
    found = {phase: cells.cell(name, task, impl, n, t) for phase, name in COLLECTOR_PHASES.items()}
    if any(c is None or c.status != Status.OK for c in found.values()):
        return f"{impl}: phases not recorded"
    return f"{impl} " + ", ".join(f"{phase} {math.exp(c.center):.3g}" for phase, c in found.items())
