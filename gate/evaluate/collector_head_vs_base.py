"""``collector_head_vs_base`` rows: each implementation's end-to-end collector step, head against base (the
collector's lockstep pass, else raw times of two moments), with the step's cost without physics."""

from __future__ import annotations

from gate.domain.benchmarks import COLLECTOR_AGAINST_BASE, COLLECTOR_COST, COLLECTOR_STEP
from gate.domain.vocabulary import Kind
from gate.evaluate.context import Context
from gate.evaluate.head_vs_base import Benchmarks, compare
from gate.evaluate.reads import Read, Reads
from gate.evaluate.row import Row

READS = Reads(kind=Kind.COLLECTOR_HEAD_VS_BASE, rounds=(Read(benchmark=COLLECTOR_AGAINST_BASE),))

COLLECTOR = Benchmarks(
    kind=Kind.COLLECTOR_HEAD_VS_BASE,
    time=COLLECTOR_STEP,
    lockstep=COLLECTOR_AGAINST_BASE,
    costs=COLLECTOR_COST,
    collector=True,
)


def rows(ctx: Context) -> list[Row]:
    return compare(ctx, COLLECTOR)
