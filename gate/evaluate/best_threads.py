"""``best_threads`` rows: per (task, num_envs), each implementation at its own fastest thread count against the
baseline at its own; paired when both are fastest at the same count, else unpaired across processes."""

from __future__ import annotations

from gate import stats
from gate.domain import PAIRED, TIME, Kind
from gate.evaluate import cost, grid
from gate.evaluate.cells import summary_of
from gate.evaluate.context import Context
from gate.evaluate.row import Row, error, measured


def rows(ctx: Context) -> list[Row]:
    if not ctx.policy.best_threads:
        return []
    out = []
    policy, baseline = ctx.policy, ctx.policy.baseline
    for impl in ctx.compare:
        for task, n in sorted({(task, n) for task, n, _ in grid.timed(ctx.cells, impl, baseline, policy)}):
            a, b = (
                grid.fastest(ctx.cells, task, baseline, n, policy),
                grid.fastest(ctx.cells, task, impl, n, policy),
            )
            where = dict(
                machine=ctx.machine,
                kind=Kind.BEST_THREADS,
                task=task,
                impl=impl,
                baseline=baseline,
                num_envs=n,
            )
            margin = policy.margin_for(task, n)
            if a is None or b is None:
                lacking = baseline if a is None else impl
                if any(
                    c.status == "failed"
                    for k, c in ctx.cells.of(TIME)
                    if (k.task, k.impl, k.num_envs) == (task, lacking, n)
                ):
                    continue  # its correctness rows say why: nothing to time
                reason = f"no timing samples of {lacking} at any thread count: measure it (asv run)"
                out.append(error(reason, margin=margin, **where))
                continue
            detail = f"{impl} at {b.threads} threads vs {baseline} at {a.threads} [{ctx.placement}]"
            paired = ctx.cells.cell(PAIRED, task, impl, n, a.threads)
            if a.threads == b.threads and paired is not None and paired.status == "ok":
                estimate = stats.paired_estimate(summary_of(paired), margin=margin)
                row = measured(estimate, **where, threads=a.threads, detail=detail)
            else:
                fail_margin, note = ctx.floors.fail_margin(ctx.machine, max(a.threads, b.threads), margin)
                estimate = stats.unpaired_estimate(
                    summary_of(a), summary_of(b), margin=margin, fail_margin=fail_margin
                )
                row = measured(estimate, **where, threads=b.threads, detail=detail, reason=note)
            out.append(cost.with_cost(ctx, row, ctx.cells, baseline, margin=margin))
    return out
