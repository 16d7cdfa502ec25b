"""More rounds for the undecided cells only: which asv benchmarks (and parameter combinations) decide a row.

``fusegate run`` and ``fusegate gate --rounds-for`` ask asv for more processes of just the benchmarks behind
the inconclusive rows that the policy's budget (``max_rounds`` processes per cell) still allows, append their
samples to the commit's results (``asv run --append-samples``), ingest and evaluate again, until every cell is
decided, the budget is spent or the time allowed is up. asv selects parameter combinations by matching
``name(param, ...)`` with the ``--bench`` regular expressions (the values as asv writes them: strings quoted).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from gate.bot.report import open_cells
from gate.domain.vocabulary import Decision, Kind, Signal
from gate.evaluate import tradeoff

TIME = r"hot_slice\.HotSlice\.time_update_state"
PAIRED = r"hot_slice\.Paired\.track_ratio"
COLLECTOR_PAIRED = r"collector\.CollectorPaired\.track_ratio"
AGAINST_BASE = r"hot_slice\.AgainstBase\.track_ratio"
COLLECTOR_AGAINST_BASE = r"collector\.CollectorAgainstBase\.track_ratio"


def _combo(benchmark: str, task: str, impl: str | None, num_envs, threads) -> str:
    impl_re = r"'[^']+'" if impl is None else re.escape(repr(impl))
    n = r"\d+" if num_envs is None else str(int(num_envs))
    t = r"\d+" if threads is None else str(int(threads))
    return rf"^{benchmark}\({re.escape(repr(task))}, {impl_re}, {n}, {t}\)$"


def benches_for(row, baseline: str) -> list[str]:
    """The ``asv run --bench`` patterns whose new processes add samples to ``row`` (a ComparisonOut)."""
    kind, task, impl, n, t = row.kind, row.task, row.impl, row.num_envs, row.threads
    if kind in (Kind.IMPL_VS_BASELINE, Kind.PAIRED_HEAD_VS_BASE):
        return [_combo(PAIRED, task, impl, n, t)]
    if kind == Kind.BEST_THREADS:  # each side at its fastest thread count: every count can become the fastest
        return [
            _combo(TIME, task, impl, n, None),
            _combo(TIME, task, baseline, n, None),
            _combo(PAIRED, task, impl, n, None),  # the paired ratios that bound the row, at every count
        ]
    if kind == Kind.HEAD_VS_BASE:  # the head timed against the base in lockstep: a pass of the head's side
        return [_combo(AGAINST_BASE, task, impl, n, t)]
    if kind == Kind.COLLECTOR_VS_BASELINE:
        return [_combo(COLLECTOR_PAIRED, task, impl, n, t)]
    if kind == Kind.COLLECTOR_HEAD_VS_BASE:
        return [_combo(COLLECTOR_AGAINST_BASE, task, impl, n, t)]
    return []


HEAD_VS_BASE = (Kind.PAIRED_HEAD_VS_BASE,)  # rows whose samples come from both commits' own measurements


def duet_cells(patterns: Iterable[str]) -> str:
    """``FUSEGATE_BENCH_DUET_CELLS`` for the lockstep patterns among ``patterns``: the pass then times only them."""
    cells = []
    for p in patterns:
        m = re.search(r"AgainstBase\\\.track_ratio\\\('([^']+)', '([^']+)', (\d+), (\d+)\\\)", p)
        if m:
            cells.append("/".join(m.groups()))
    return ",".join(dict.fromkeys(cells))


def open_benches(
    comparisons: Iterable, policy: dict, machine: str | None = None, *, side: str = "head"
) -> list[str]:
    """Patterns for every inconclusive row on ``machine`` (all machines if None) the budget still allows: on
    the head commit (``side="head"``), or on the base (``"base"``: only the head-vs-base rows have base samples)."""
    budget = int(policy.get("max_rounds", 0))
    baseline = str(policy.get("baseline", "handwritten"))
    rows = list(comparisons)
    patterns: dict[str, None] = {}
    for row in open_cells(rows, budget):
        if (machine is None or row.machine == machine) and (side == "head" or row.kind in HEAD_VS_BASE):
            for sibling in tradeoff_siblings(row, rows, budget):  # the speedup that would prove it, first
                patterns.update(dict.fromkeys(benches_for(sibling, baseline)))
            patterns.update(dict.fromkeys(benches_for(row, baseline)))
    return list(patterns)


def tradeoff_siblings(row, rows: list, budget: int) -> list:
    """For a pending trade-off (inconclusive, signal ``tradeoff``: ``gate.evaluate.tradeoff``), the rows of the same
    kernel, scale and kind at other thread counts whose rounds the budget allows: their speedup decides it."""
    if row.decision != Decision.INCONCLUSIVE or getattr(row, "signal", None) != Signal.TRADEOFF:
        return []
    mine = tradeoff.family(row)
    return [r for r in rows if tradeoff.family(r) == mine and r.threads != row.threads and r.groups < budget]


def class_of(pattern: str) -> str:
    """The ``module.Class`` a pattern of ``benches_for`` selects from."""
    return ".".join(pattern.lstrip("^").split("\\(")[0].replace("\\", "").split(".")[:2])


def bench_args(patterns: Iterable[str]) -> list[str]:
    """``--bench P`` for each pattern (asv runs what any of them matches)."""
    return [arg for p in patterns for arg in ("--bench", p)]
