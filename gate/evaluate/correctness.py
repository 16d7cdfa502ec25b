"""``correctness`` rows: a cell whose benchmarks raised on the head (parity against the reference, a kernel or
collector that cannot be built, a collector that departs from the reference's rollout) fails, whatever the
timings. A failed cost pass is not one, nor a failed lockstep pass against the base (either side may have failed
it): each is an error of the rows it backs."""

from __future__ import annotations

from collections import defaultdict

from gate.domain.benchmarks import AGAINST_BASE, COLLECTOR_AGAINST_BASE, COST_BENCHMARKS
from gate.domain.vocabulary import Decision, Kind, Status
from gate.evaluate.cells import Summary
from gate.evaluate.context import Context
from gate.evaluate.reads import Reads
from gate.evaluate.row import Row

READS = Reads(kind=Kind.CORRECTNESS)  # a failure is decided: nothing to add

NOT_CORRECTNESS = COST_BENCHMARKS | {AGAINST_BASE, COLLECTOR_AGAINST_BASE}


def rows(ctx: Context) -> list[Row]:
    """One fail row per cell whose benchmarks raised, naming them and the exception."""
    failed: dict[tuple, list[tuple[str, Summary]]] = defaultdict(list)
    for key, c in sorted(ctx.cells.items()):
        if c.status == Status.FAILED and key.benchmark not in NOT_CORRECTNESS:
            failed[(key.task, key.impl, key.num_envs, key.threads)].append(
                (key.benchmark.rsplit(".", 2)[-2], c)
            )
    out = []
    for (task, impl, n, t), found in failed.items():
        names = ", ".join(name for name, _ in found)
        message = next((c.message for _, c in found if not c.message.startswith("the benchmark raised")), "")
        # a collector's message ends with the command that reproduces it (benchmarks/collector.py)
        collector = all(c.benchmark.startswith("collector.") for _, c in found)
        hint = "" if collector else "; fix the kernel (fusegate kernels parity shows the arrays)"
        out.append(
            Row(
                machine=ctx.machine,
                kind=Kind.CORRECTNESS,
                task=task,
                impl=impl,
                baseline="reference",
                num_envs=n or None,
                threads=t or None,
                detail=f"{names} [{ctx.placement}]",
                decision=Decision.FAIL,
                reason=f"{message or found[0][1].message}{hint}",
            )
        )
    return out
