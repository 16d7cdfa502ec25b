"""``best_threads`` rows: per (task, num_envs), each implementation at its own fastest thread count against the
baseline at its own.

With both fastest at the same count the row is that count's paired ratio. When the counts differ (tb for the
implementation, ta for the baseline), the paired ratios r(t) = impl(t) / baseline(t) bound the row
R = impl(tb) / baseline(ta): R <= r(ta), as the implementation at its fastest is no slower than at ta, and
R >= r(tb), as the baseline at its fastest is no slower than at tb. So a pass of r(ta) passes the row and a
fail of r(tb) fails it, both from in-process pairs; only when neither bound decides is the row the unpaired
ratio of times taken in different processes (on a shared machine, an interval too wide to decide much).
"""

from __future__ import annotations

from gate import stats
from gate.domain.benchmarks import PAIRED, TIME
from gate.domain.vocabulary import Kind, Status
from gate.evaluate import cost, grid
from gate.evaluate.cells import summary_of
from gate.evaluate.context import Context
from gate.evaluate.reads import Impl, Read, Reads, Threads
from gate.evaluate.row import Row, error, measured

# each side at its fastest thread count: every count can become the fastest, and the paired ratios bound the row
READS = Reads(
    kind=Kind.BEST_THREADS,
    rounds=(
        Read(benchmark=TIME, threads=Threads.EVERY),
        Read(benchmark=TIME, impl=Impl.BASELINE, threads=Threads.EVERY),
        Read(benchmark=PAIRED, threads=Threads.EVERY),
    ),
)


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
                    c.status == Status.FAILED
                    for k, c in ctx.cells.of(TIME)
                    if (k.task, k.impl, k.num_envs) == (task, lacking, n)
                ):
                    continue  # its correctness rows say why: nothing to time
                reason = f"no timing samples of {lacking} at any thread count: measure it (asv run)"
                out.append(error(reason, margin=margin, **where))
                continue
            detail = f"{impl} at {b.threads} threads vs {baseline} at {a.threads} [{ctx.placement}]"
            paired = ctx.cells.cell(PAIRED, task, impl, n, a.threads)
            if a.threads == b.threads and paired is not None and paired.status == Status.OK:
                estimate = stats.paired_estimate(summary_of(paired), margin=margin)
                row = measured(estimate, **where, threads=a.threads, detail=detail)
            elif bound := _bound(ctx, task, impl, n, a.threads, b.threads, margin):
                estimate, threads, why = bound
                row = measured(estimate, **where, threads=threads, detail=f"{detail}; {why}")
            else:
                fail_margin, note = ctx.floors.fail_margin(ctx.machine, max(a.threads, b.threads), margin)
                estimate = stats.unpaired_estimate(
                    summary_of(a), summary_of(b), margin=margin, fail_margin=fail_margin
                )
                row = measured(estimate, **where, threads=b.threads, detail=detail, reason=note)
            out.append(cost.with_cost(ctx, row, ctx.cells, baseline, margin=margin))
    return out


def _bound(
    ctx: Context, task: str, impl: str, n: int, ta: int, tb: int, margin: float
) -> tuple[stats.Estimate, int, str] | None:
    """The paired ratio that decides a row whose fastest counts differ (see the module), with its count and
    why; None when neither bound decides, or when both do and contradict each other (r(tb) above the fail
    margin while r(ta) is within the margin cannot be if ta and tb are the fastest counts: the raw times that
    chose them were wrong, and the row falls back on them)."""
    baseline, found = ctx.policy.baseline, {}
    for t in (ta, tb):
        cell = ctx.cells.cell(PAIRED, task, impl, n, t)
        if cell is not None and cell.status == Status.OK:
            found[t] = stats.paired_estimate(summary_of(cell), margin=margin)  # as a same-count row is
    above, below = found.get(ta), found.get(tb)
    passes = above is not None and above.high <= 1 + margin and above.groups >= ctx.policy.min_rounds
    fails = below is not None and below.low > 1 + below.fail_margin
    if passes and not fails:
        return above, ta, f"bounded above by {impl}/{baseline} paired at {ta} threads, {baseline}'s fastest"
    if fails and not passes:
        return below, tb, f"bounded below by {impl}/{baseline} paired at {tb} threads, {impl}'s fastest"
    return None
