"""``collector_vs_baseline`` rows: the end-to-end collector step (``benchmarks/collector.py``) of each compared
implementation against the baseline's, paired in one process, with the policy's ``collector_margin``; the reason
gives physics, the kernel and the rest per env-step. A collector that fails to construct, to run, or to follow
the reference's rollout is a ``correctness`` row."""

from __future__ import annotations

from gate import stats
from gate.domain.benchmarks import COLLECTOR_CHECK, COLLECTOR_COST, COLLECTOR_PAIRED
from gate.domain.vocabulary import Kind, Status
from gate.evaluate import cost, grid
from gate.evaluate.cells import missing, summary_of
from gate.evaluate.context import Context
from gate.evaluate.reads import Read, Reads
from gate.evaluate.row import Row, error, measured

READS = Reads(kind=Kind.COLLECTOR_VS_BASELINE, rounds=(Read(benchmark=COLLECTOR_PAIRED),))


def rows(ctx: Context) -> list[Row]:
    out = []
    policy, baseline, cells = ctx.policy, ctx.policy.baseline, ctx.cells
    checked = sorted(
        (k.task, k.num_envs, k.threads)
        for k, _ in cells.of(COLLECTOR_CHECK)
        if k.impl == baseline and (not policy.threads or k.threads in policy.threads)
    )
    margin = policy.collector_margin
    for impl in ctx.compare:
        for task, n, t in checked:
            if cells.cell(COLLECTOR_CHECK, task, impl, n, t) is None:
                continue  # not measured for this task (a narrowed run): nothing to compare
            backing = [
                cells.cell(b, task, i, n, t)
                for b in (COLLECTOR_CHECK, COLLECTOR_PAIRED)
                for i in (impl, baseline)
            ]
            if any(c is not None and c.status == Status.FAILED for c in backing):
                continue  # its correctness rows say why
            where = ctx.where(Kind.COLLECTOR_VS_BASELINE, task, impl, baseline, n, t)
            c = cells.cell(COLLECTOR_PAIRED, task, impl, n, t)
            problem = missing(c, "paired collector samples")
            if problem:
                out.append(error(problem, margin=margin, **where))
                continue
            phases = f"us per env-step: {grid.phases(cells, task, impl, n, t)}; {grid.phases(cells, task, baseline, n, t)}"
            row = measured(stats.paired_estimate(summary_of(c), margin=margin), **where, reason=phases)
            out.append(cost.with_cost(ctx, row, cells, baseline, margin=margin, costs=COLLECTOR_COST))
    return out
