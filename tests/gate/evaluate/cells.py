"""In-memory cells for the row kinds' truth tables (``test_rows.py``, ``test_tradeoff.py``): no git, asv or store."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gate import stats
from gate.evaluate import correctness, tally
from gate.evaluate.cells import Cells
from gate.evaluate.context import Context
from gate.policy import Policy

TASK, N = "g1_walk", 4096
IMPL, BASELINE = "assembled", "handwritten"
POLICY = Policy(baseline=BASELINE, compare=(IMPL,), head_vs_base=(IMPL, BASELINE), cost_metric="instructions")

# Per-process medians of a time ratio (5 processes of 20 samples each, tight within a process).
TIME_STATES = {
    "pass": [1.0, 1.0, 1.0, 1.0, 1.0],
    "fail": [1.3, 1.3, 1.3, 1.3, 1.3],
    "undecided": [0.95, 1.10, 0.98, 1.08, 1.0],  # straddles the margin, point estimate within the fail margin
    "says_slower": [0.97, 1.25, 1.02, 1.2, 1.09],  # point estimate above the fail margin, not a fail
    "faster": [0.6, 0.6, 0.6, 0.6, 0.6],  # wholly below 1 / (1 + the fail margin): a significant speedup
    # faster than 1 / (1 + the fail margin) by its estimate, its interval straddling the margin: not yet a speedup
    "says_faster": [0.78, 0.95, 0.84, 0.97, 0.86],
}
COST_STATES = {"pass": 1.0, "fail": 1.2, "implausible": 0.3}


@dataclass(frozen=True, kw_only=True)
class Cell:
    """A stored cell summary (``gate.evaluate.cells.Summary``)."""

    benchmark: str
    task: str = TASK
    impl: str = IMPL
    num_envs: int = N
    threads: int = 1
    status: str = "ok"
    message: str = ""
    center: float | None = None
    se: float | None = None
    between_se: float | None = None
    low: float | None = None
    high: float | None = None
    samples: int = 0
    groups: int = 0


def timed(benchmark: str, medians: list[float], **where) -> Cell:
    """A cell of per-process samples around ``medians`` (times or ratios)."""
    jitter = np.linspace(-0.002, 0.002, 20)
    s = stats.summarize([m * np.exp(jitter) for m in medians])
    return Cell(
        benchmark=benchmark,
        center=s.center,
        se=s.se,
        between_se=s.between_se,
        low=s.low,
        high=s.high,
        samples=s.samples,
        groups=s.groups,
        **where,
    )


def counted(benchmark: str, value: float, **where) -> Cell:
    s = stats.exact([value])
    return Cell(
        benchmark=benchmark, center=s.center, se=0.0, low=s.low, high=s.high, samples=1, groups=1, **where
    )


def broken(benchmark: str, status: str = "failed", **where) -> Cell:
    return Cell(
        benchmark=benchmark, status=status, message=f"{benchmark} {status}: the test says so", **where
    )


def index(cells: list[Cell]) -> Cells:
    out = Cells()
    for c in cells:
        out.add(c)
    return out


def judge(module, cells: list[Cell], base: list[Cell] | None = None, *, policy: Policy = POLICY, **ctx):
    """One row kind's rows on ``cells`` (and ``base``: head against base), with the correctness rows, decided."""
    context = Context(
        machine="m",
        placement="p",
        cells=index(cells),
        policy=policy,
        compare=(IMPL,),
        base=None if base is None else index(base),
        versus_base=base is not None,
        base_sha="b" * 40,
        **ctx,
    )
    rows = correctness.rows(context) + module.rows(context)
    tally.decide(rows, policy, extra=set())
    return rows
