"""``paired_head_vs_base`` rows: each compared implementation's paired ratio to the baseline, head over base.

Each ratio is measured inside one process, alternating in milliseconds, so the machine's speed, which changes
between and within processes on a shared VM, cancels: its head-vs-base interval is narrow where the raw times'
is not. It asks whether the change made the implementation slower *relative to the baseline*; the
``head_vs_base`` rows still judge each one's own time. Its cost is the ratio of the two commits' cost ratios
(implementation / baseline). Only commits that both have paired samples.

The baseline is the yardstick: the row applies only while the head runs the baseline's sources of the base (its
kernel id, ``gate.provenance``, the same in every run of both). When the head changed the baseline, the ratio moves
with the baseline and would name the wrong implementation (a faster hand-written kernel makes an unchanged
assembled one look slower): the row passes with the ``baseline`` signal, asks for no rounds, and each
implementation's own ``head_vs_base`` rows (lockstep, cost, sources) judge the change. Where the runs did not
record the ids, the row is judged as before. When the head runs the base's sources of both (the policy's
``same_sources_pass``), the ratio is the same code timed twice: the row passes with the ``sources`` signal and asks
for no rounds, as the implementation's ``head_vs_base`` rows do."""

from __future__ import annotations

from gate import stats
from gate.domain.benchmarks import COST, PAIRED
from gate.domain.vocabulary import Kind, Signal, Status
from gate.evaluate import cost
from gate.evaluate.cells import Summary, summary_of
from gate.evaluate.context import Context
from gate.evaluate.reads import Read, Reads
from gate.evaluate.row import Row, join, measured, passed

# both commits' own paired samples back a row: rounds on the head and on the base
READS = Reads(kind=Kind.PAIRED_HEAD_VS_BASE, rounds=(Read(benchmark=PAIRED),), base_rounds=True)


def ratio_summary(num: Summary, den: Summary) -> stats.Summary:
    """The exact summary of num / den (log units: a difference; the interval spans both ranges)."""
    a, b = summary_of(num), summary_of(den)
    return stats.Summary(
        center=a.center - b.center,
        se=0.0,
        low=a.low - b.high,
        high=a.high - b.low,
        samples=min(a.samples, b.samples),
        groups=min(a.groups, b.groups),
    )


def rows(ctx: Context) -> list[Row]:
    if not ctx.versus_base:
        return []
    out = []
    baseline, margin = ctx.policy.baseline, ctx.policy.head_vs_base_margin
    for key, c in sorted(ctx.cells.of(PAIRED)):
        a = ctx.base.get(key) if ctx.base else None
        if key.impl not in ctx.compare or c.status != Status.OK or a is None or a.status != Status.OK:
            continue
        estimate = stats.unpaired_estimate(summary_of(a), summary_of(c), margin=margin, fail_margin=margin)
        where = ctx.where(Kind.PAIRED_HEAD_VS_BASE, key.task, key.impl, baseline, key.num_envs, key.threads)
        if f"{key.task}/{baseline}" in ctx.changed:
            out.append(
                passed(
                    Signal.BASELINE,
                    f"the head changes the baseline {baseline} of {key.task} (its kernel id): {key.impl} / "
                    f"{baseline} moved to {estimate.ratio:.3f} of the base's with it, which says nothing of "
                    f"{key.impl}; each implementation's own head_vs_base rows judge the change",
                    margin=margin,
                    **where,
                )
            )
            continue
        same = [ctx.same_sources.get(f"{key.task}/{impl}") for impl in (key.impl, baseline)]
        if all(same):
            out.append(
                passed(
                    Signal.SOURCES,
                    f"{key.impl} and {baseline} run the base's sources (kernel ids {same[0]}, {same[1]}): "
                    f"the same code on both commits, the ratio {estimate.ratio:.3f} not judged (the policy's "
                    "same_sources_pass)",
                    margin=margin,
                    **where,
                )
            )
            continue
        row = measured(
            estimate, **where, reason=f"{key.impl} / {baseline} paired in each process, head over base"
        )
        out.append(row)
        if cost.applies(ctx, key.threads):
            _cost(ctx, row)
    return out


def _cost(ctx: Context, row: Row) -> None:
    sides = [
        cost.cell(ctx, cells, row.task, impl, row.num_envs, COST)
        for cells in (ctx.base, ctx.cells)
        for impl in (row.impl, ctx.policy.baseline)
    ]
    if any(s is None for s in sides):
        row.reason = join(row.reason, "no cost on both commits: time alone decides")
    elif any(s.status != Status.OK for s in sides):
        row.cost_error = "cost: " + next(s.message for s in sides if s.status != Status.OK)
    else:
        margin = ctx.policy.cost_margin
        fail_margin = ctx.floors.cost_fail_margin(ctx.machine, ctx.policy.cost_metric, margin)
        row.cost = stats.exact_estimate(
            ratio_summary(sides[0], sides[1]),
            ratio_summary(sides[2], sides[3]),
            margin=margin,
            fail_margin=fail_margin,
        )
        row.cost_ratio = row.cost.ratio
