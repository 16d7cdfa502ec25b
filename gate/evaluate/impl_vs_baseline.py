"""``impl_vs_baseline`` rows: each compared implementation against the baseline per (task, num_envs, threads),
from in-process paired samples of the head (``hot_slice.Paired``)."""

from __future__ import annotations

from gate import stats
from gate.domain.benchmarks import PAIRED
from gate.domain.vocabulary import Kind, Status
from gate.evaluate import cost, grid
from gate.evaluate.cells import missing, summary_of
from gate.evaluate.context import Context
from gate.evaluate.reads import Read, Reads
from gate.evaluate.row import Row, error, measured

# more processes of its in-process pairs decide a row
READS = Reads(kind=Kind.IMPL_VS_BASELINE, rounds=(Read(benchmark=PAIRED),))


def rows(ctx: Context) -> list[Row]:
    out = []
    baseline = ctx.policy.baseline
    for impl in ctx.compare:
        for task, n, t in grid.timed(ctx.cells, impl, baseline, ctx.policy):
            c = ctx.cells.cell(PAIRED, task, impl, n, t)
            margin = ctx.policy.margin_for(task, n)
            where = ctx.where(Kind.IMPL_VS_BASELINE, task, impl, baseline, n, t)
            problem = missing(c, "paired samples")
            if problem and c is not None and c.status == Status.FAILED:
                continue  # its correctness rows say why
            if problem:
                out.append(error(problem, margin=margin, **where))
                continue
            row = measured(stats.paired_estimate(summary_of(c), margin=margin), **where)
            out.append(cost.with_cost(ctx, row, ctx.cells, baseline, margin=margin))
    return out
