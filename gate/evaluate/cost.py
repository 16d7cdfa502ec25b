"""The cost signal of a row: the exact per-call cost ratio B/A under callgrind, at 1 thread."""

from __future__ import annotations

from gate import stats
from gate.domain.benchmarks import COST
from gate.domain.vocabulary import Status
from gate.evaluate.cells import Cells, Summary, summary_of
from gate.evaluate.context import Context
from gate.evaluate.row import Row, join


def applies(ctx: Context, threads: int | None) -> bool:
    """Whether a row at ``threads`` carries cost: the policy measures one, and at 1 thread unless it asks for more."""
    return ctx.policy.cost_metric != "none" and (threads in (None, 1) or ctx.policy.cost_for_parallel)


def cell(ctx: Context, cells: Cells | None, task: str, impl: str, n: int | None, costs: dict[str, str]):
    if cells is None or ctx.policy.cost_metric == "none":
        return None
    return cells.cell(costs[ctx.policy.cost_metric], task, impl, n, 1)


def attach(
    ctx: Context, row: Row, a: Summary | None, b: Summary | None, *, margin: float, names: tuple[str, str]
) -> Row:
    """Attach the cost comparison of summaries ``b`` over ``a`` (the summaries of ``names``; None: not
    measured) to a row with a time estimate."""
    for name, c in zip(names, (a, b), strict=True):
        if c is not None and c.status != Status.OK:
            row.cost_error = f"cost of {name}: {c.message}"
            return row
    if a is None or b is None:
        row.reason = join(
            row.reason, f"no cost for {names[0] if a is None else names[1]}: time alone decides"
        )
        return row
    fail_margin = ctx.floors.cost_fail_margin(ctx.machine, ctx.policy.cost_metric, margin)
    row.cost = stats.exact_estimate(summary_of(a), summary_of(b), margin=margin, fail_margin=fail_margin)
    row.cost_ratio = row.cost.ratio
    return row


def with_cost(
    ctx: Context, row: Row, cells_a: Cells | None, impl_a: str, *, margin: float, costs: dict[str, str] = COST
) -> Row:
    """The row with its cost B/A: B is the row's implementation in the head's cells, A is ``impl_a`` in
    ``cells_a`` (the base's cells, or the head's for the baseline); ``costs`` names the cost benchmark per metric
    (the hot slice's, or the collector step's)."""
    if not applies(ctx, row.threads):
        return row
    a = cell(ctx, cells_a, row.task, impl_a, row.num_envs, costs)
    b = cell(ctx, ctx.cells, row.task, row.impl, row.num_envs, costs)
    return attach(ctx, row, a, b, margin=margin, names=(row.baseline, row.impl))
