"""``head_vs_base`` rows: every implementation in the policy's ``head_vs_base``, per cell, head against base.

With the lockstep pass (the head was timed against this base: ``hot_slice.AgainstBase``), a cell's time is the
paired estimate of its head/base ratios, immune to the machine's slow phases. Without, it is the two commits' raw
times, taken at different moments: they inform (and may pass) the row but never fail it on their own; the row
asks for the lockstep pass instead (``moments``). The cost is the same kernel's, base against head, at 1 thread.

A kernel whose sources are the base's (the same kernel id in every run of both: ``Context.same_sources``) runs the
same code on both sides: its rows pass by ``sources``, and the lockstep pass does not time it.

A benchmark that failed on the base (its kernel or collector could not be built or raised) and runs on the head,
with no lockstep pass that timed the base's kernel, has nothing to be timed against: the head repairs the base.
Its rows pass by ``repaired``; the head's correctness rows and its headline rows (against the baseline) still
judge it.

A cell measured on base but not on head is an error, unless the head ran its benchmark at other cells: then the
head's profile no longer has it (e.g. the reference timed at one scale) and it goes to the context's ``dropped``.
``collector_head_vs_base`` (its own module) is the same comparison of the collector step."""

from __future__ import annotations

from dataclasses import dataclass

from gate import stats
from gate.domain.benchmarks import AGAINST_BASE, COST, TIME
from gate.domain.vocabulary import Decision, Kind, Signal, Status
from gate.evaluate import cost, grid
from gate.evaluate.cells import summary_of
from gate.evaluate.context import Context
from gate.evaluate.correctness import NOT_CORRECTNESS
from gate.evaluate.reads import Read, Reads
from gate.evaluate.row import Row, error, join, measured, passed

# the head timed against the base in lockstep: a pass of the head's side (it runs the base's kernel beside it)
READS = Reads(kind=Kind.HEAD_VS_BASE, rounds=(Read(benchmark=AGAINST_BASE),))


@dataclass(frozen=True)
class Benchmarks:
    """What one head-vs-base comparison reads: the raw time, the lockstep ratios, the cost per metric."""

    kind: Kind
    time: str
    lockstep: str
    costs: dict[str, str]
    collector: bool = False


HOT_SLICE = Benchmarks(kind=Kind.HEAD_VS_BASE, time=TIME, lockstep=AGAINST_BASE, costs=COST)


def rows(ctx: Context) -> list[Row]:
    return compare(ctx, HOT_SLICE)


def compare(ctx: Context, b: Benchmarks) -> list[Row]:
    if not ctx.versus_base:
        return []
    policy, cells, base = ctx.policy, ctx.cells, ctx.base
    margin = policy.head_vs_base_margin
    if not base:
        if b.collector:
            return []  # the hot slice's row says so
        return [
            Row(
                machine=ctx.machine,
                kind=Kind.HEAD_VS_BASE,
                baseline="base",
                detail=ctx.placement,
                margin=margin,
                decision=Decision.ERROR,
                reason=f"base {ctx.base_sha[:12]} has no results on this machine and placement: measure it "
                "(fusegate gate --base BASE --head HEAD --measure)",
            )
        ]
    out = []
    keys = sorted(
        {
            (k.task, k.impl, k.num_envs, k.threads)
            for k in cells
            if k.benchmark == b.time or (ctx.lockstep and k.benchmark == b.lockstep)
        }
    )
    for task, impl, n, t in keys:
        c = cells.cell(b.time, task, impl, n, t)
        if not policy.judges_head_vs_base(impl) or (c is not None and c.status == Status.FAILED):
            continue  # failures are correctness rows
        where = ctx.where(b.kind, task, impl, "base", n, t)
        if kernel := ctx.same_sources.get(f"{task}/{impl}"):
            out.append(
                passed(
                    Signal.SOURCES,
                    f"the base's sources (kernel id {kernel}: kernels/ and the pins, less the other kernels' "
                    "own modules): the same code, not timed against the base (the policy's same_sources_pass)",
                    margin=margin,
                    **where,
                )
            )
            continue
        a = base.cell(b.time, task, impl, n, t)
        paired = cells.cell(b.lockstep, task, impl, n, t) if ctx.lockstep else None
        broke = _failed_on_base(ctx, b, task, impl, n, t)
        # a lockstep pass that timed the base's kernel still judges it; otherwise there is nothing to time against
        if (
            broke is not None
            and c is not None
            and c.status == Status.OK
            and (paired is None or paired.status != Status.OK)
        ):
            out.append(
                passed(
                    Signal.REPAIRED,
                    f"failed on base {ctx.base_sha[:12]} ({(broke.message or broke.status)[:120]}) and runs on "
                    "the head: nothing to time it against; the head's correctness and headline rows judge it",
                    margin=margin,
                    **where,
                )
            )
            continue
        if paired is not None and paired.status == Status.FAILED:
            out.append(error(f"lockstep: {paired.message}", margin=margin, **where))
            continue
        if paired is not None and paired.status == Status.OK:
            estimate = stats.paired_estimate(summary_of(paired), margin=margin)
            note = f"timed against the base in lockstep ({paired.groups} worker pairs)"
            moments = False
        else:
            if c is None or c.status != Status.OK:
                state = "not measured" if c is None else (c.message or c.status)
                out.append(error(f"head: {state}", margin=margin, **where))
                continue
            if a is None or a.status != Status.OK:
                state = "not measured" if a is None else (a.message or a.status)
                out.append(error(f"base {ctx.base_sha[:12]}: {state}", margin=margin, **where))
                continue
            fail_margin, note = ctx.floors.fail_margin(ctx.machine, t, margin)
            estimate = stats.unpaired_estimate(
                summary_of(a), summary_of(c), margin=margin, fail_margin=fail_margin
            )
            moments = True
        if b.collector:
            note = join(note, f"us per env-step: {grid.phases(cells, task, impl, n, t)}")
        row = measured(estimate, **where, reason=note)
        row.moments = moments
        out.append(cost.with_cost(ctx, row, base, impl, margin=policy.cost_margin, costs=b.costs))
    return out + _gone(ctx, b)


def _failed_on_base(ctx: Context, b: Benchmarks, task: str, impl: str, n: int, t: int):
    """The base's failure at this cell: its time benchmark or a check of the same suite (the collector's
    construction check, a parity check) raised there. Cost and lockstep passes are no such failure."""
    for key, a in ctx.base.items():
        if (
            (key.task, key.impl, key.num_envs, key.threads) == (task, impl, n, t)
            and a.status == Status.FAILED
            and key.benchmark not in NOT_CORRECTNESS
            and key.benchmark.startswith("collector.") == b.collector
        ):
            return a
    return None


def _gone(ctx: Context, b: Benchmarks) -> list[Row]:
    """Cells measured on base but not on head. One missing on the head because its benchmark raised there has a
    correctness row that says why; a collector step is also missing when the collector it was paired with raised.
    (A failed cost or lockstep pass is no correctness row: the cell is still an error here.)"""
    cells = ctx.cells
    heads = {k.impl for k in (*cells, *(ctx.base or ())) if ctx.policy.judges_head_vs_base(k.impl)}
    raised = [k for k, c in cells.items() if c.status == Status.FAILED and k.benchmark not in NOT_CORRECTNESS]
    failed = {(k.task, k.impl, k.num_envs, k.threads) for k in raised}
    if b.collector:
        failed |= {
            (k.task, i, k.num_envs, k.threads)
            for k in raised
            if k.benchmark.startswith("collector.")
            for i in heads
        }
    measured_benchmarks = {k.benchmark for k, c in cells.items() if c.status == Status.OK}
    out = []
    for key, a in sorted(ctx.base.items()):
        cell = (key.task, key.impl, key.num_envs, key.threads)
        if (
            key.benchmark != b.time
            or key.impl not in heads
            or a.status != Status.OK
            or key in cells
            or cells.cell(b.lockstep, *cell) is not None
            or cell in failed
        ):
            continue
        if key.benchmark in measured_benchmarks:
            ctx.dropped.append(f"{ctx.machine} {key.task}/{key.impl} N={key.num_envs} thr={key.threads}")
            continue
        reason = "measured on base but not on head"
        out.append(
            error(
                reason,
                margin=ctx.policy.head_vs_base_margin,
                **ctx.where(b.kind, key.task, key.impl, "base", key.num_envs, key.threads),
            )
        )
    return out
