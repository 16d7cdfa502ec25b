"""More rounds for the undecided cells only: which asv benchmarks (and parameter combinations) decide a row.

``fusegate run`` and ``fusegate gate --measure`` ask asv for more processes of just the benchmarks behind
the inconclusive rows that the policy's budget (``max_rounds`` processes per cell) still allows, append their
samples to the commit's results (``asv run --append-samples``), ingest and evaluate again, until every cell is
decided, the budget is spent or the time allowed is up. What a row's kind reads is declared by its module
(``gate.evaluate.reads``); the selections, their ``--bench`` patterns and a round's time derive from it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from gate.domain.benchmarks import AGAINST_BASE, COLLECTOR_AGAINST_BASE
from gate.domain.vocabulary import Decision, Signal
from gate.evaluate import kinds, tradeoff
from gate.evaluate.reads import Selection, open_cells
from gate.policy import Policy

ROUNDS_STEP = 2  # processes added per undecided cell and pass
PROCESS_S = 10.0  # seconds per benchmark process of a suite this commit's results have not timed yet
START_S = 15.0  # seconds of asv's start and the parity check per asv call
LOCKSTEP = frozenset({AGAINST_BASE, COLLECTOR_AGAINST_BASE})  # the suites a duet pass times


def benches_for(row, baseline: str) -> list[Selection]:
    """The selections whose new processes add samples to ``row`` (a ComparisonOut), by its kind's ``READS``."""
    return kinds.selections_of(row, baseline)


def duet_cells(selections: Iterable[Selection]) -> str:
    """``FUSEGATE_BENCH_DUET_CELLS`` for the lockstep selections among ``selections``: the pass then times only
    them."""
    cells = [
        f"{s.task}/{s.impl}/{s.num_envs}/{s.threads}"
        for s in selections
        if s.benchmark in LOCKSTEP and None not in (s.impl, s.num_envs, s.threads)
    ]
    return ",".join(dict.fromkeys(cells))


def open_benches(
    comparisons: Iterable, policy: Policy, machine: str | None = None, *, side: str = "head"
) -> list[Selection]:
    """Selections for every inconclusive row on ``machine`` (all machines if None) the budget still allows: on
    the head commit (``side="head"``), or on the base (``"base"``: only the kinds that read the base's own samples,
    ``Reads.base_rounds``)."""
    budget, baseline = policy.max_rounds, policy.baseline
    rows = list(comparisons)
    chosen: dict[Selection, None] = {}
    for row in open_cells(rows, budget):
        if (machine is None or row.machine == machine) and (
            side == "head" or kinds.declared(row.kind).base_rounds
        ):
            for sibling in tradeoff_siblings(row, rows, budget):  # the speedup that would prove it, first
                chosen.update(dict.fromkeys(benches_for(sibling, baseline)))
            chosen.update(dict.fromkeys(benches_for(row, baseline)))
    return list(chosen)


def tradeoff_siblings(row, rows: list, budget: int) -> list:
    """For a pending trade-off (inconclusive, signal ``tradeoff``: ``gate.evaluate.tradeoff``), the rows of the same
    kernel, scale and kind at other thread counts whose rounds the budget allows: their speedup decides it."""
    if row.decision != Decision.INCONCLUSIVE or getattr(row, "signal", None) != Signal.TRADEOFF:
        return []
    mine = tradeoff.family(row)
    return [r for r in rows if tradeoff.family(r) == mine and r.threads != row.threads and r.groups < budget]


def seconds(selections: Iterable[Selection], per_process: Mapping[str, float]) -> dict[Selection, float]:
    """A round's expected seconds per selection: ``ROUNDS_STEP`` processes of its suite, at the suite's seconds
    per process in the commit's results (``per_process``: ``module.Class`` -> seconds), else ``PROCESS_S``."""
    return {s: ROUNDS_STEP * per_process.get(s.suite, PROCESS_S) for s in selections}


def expected(steps: Iterable[Mapping[Selection, float]]) -> float:
    """The seconds of the asv calls ``steps`` (each call's selections and their seconds), their starts included."""
    return sum(sum(step.values()) + START_S for step in steps)


def bench_args(selections: Iterable[Selection]) -> list[str]:
    """``--bench P`` for each selection's pattern (asv runs what any of them matches)."""
    return [arg for s in selections for arg in ("--bench", s.pattern)]
