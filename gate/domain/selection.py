"""Which of the gate's suites an ``asv run`` measures: its ``--bench`` patterns and rounds."""

from __future__ import annotations

# ``asv run --bench`` for what the gate decides on in the quick profile (``fusegate run``, the scenarios): the
# exact suites are one measurement per commit (their classes say rounds = 1; asv's ``-a rounds=N`` would run
# every track of them in N more processes for nothing), the timed ones take the rounds asked for.
GATE_BENCH_EXACT = r"^(cost\.(Cost|CollectorCost)|collector\.CollectorCheck)\."
GATE_BENCH_TIMED = r"^(hot_slice\.(HotSlice|Paired)|collector\.CollectorPaired)\."
GATE_BENCH_HOT = r"^hot_slice\.HotSlice\."
GATE_BENCH_PAIRED = r"^(hot_slice\.Paired|collector\.CollectorPaired)\."
# A head timed against its base in lockstep: one pass (its own worker pairs), only when a base tree is named.
GATE_BENCH_AGAINST = r"^(hot_slice\.AgainstBase|collector\.CollectorAgainstBase)\."
# The same without the collector's suites: a machine's second placement (the collector is measured once per commit,
# on the first; gate.meter.plan).
_WITHOUT_COLLECTOR = {
    GATE_BENCH_EXACT: r"^cost\.(Cost|CollectorCost)\.",
    GATE_BENCH_TIMED: r"^hot_slice\.(HotSlice|Paired)\.",
    GATE_BENCH_HOT: GATE_BENCH_HOT,
    GATE_BENCH_PAIRED: r"^hot_slice\.Paired\.",
    GATE_BENCH_AGAINST: r"^hot_slice\.AgainstBase\.",
}
PAIRED_ROUNDS = 3  # asv honours a class's ``rounds`` for timing benchmarks only; tracks need ``-a rounds=N``


def gate_asv_runs(
    rounds: int | None = None, *, paired_rounds: int = PAIRED_ROUNDS, collector: bool = True
) -> list[tuple[str, ...]]:
    """The ``asv run`` arguments that measure the gate's suites: the exact ones once, the timed ones in
    ``rounds`` processes per cell, or HotSlice in its own (``FUSEGATE_BENCH_HOT_ROUNDS``, 6 short processes) and
    the paired suites (asv tracks, whose class ``rounds`` asv ignores) in ``paired_rounds``. ``collector=False``
    leaves the collector's suites out."""
    if rounds:
        runs = [("--bench", GATE_BENCH_EXACT), ("--bench", GATE_BENCH_TIMED, "-a", f"rounds={rounds}")]
    else:
        runs = [
            ("--bench", GATE_BENCH_EXACT),
            ("--bench", GATE_BENCH_HOT),
            ("--bench", GATE_BENCH_PAIRED, "-a", f"rounds={paired_rounds}"),
        ]
    return runs if collector else [(a, _WITHOUT_COLLECTOR[b], *rest) for a, b, *rest in runs]


def gate_bench_against(*, collector: bool = True) -> str:
    """``asv run --bench`` of the lockstep pass, with or without the collector's suite."""
    return GATE_BENCH_AGAINST if collector else _WITHOUT_COLLECTOR[GATE_BENCH_AGAINST]
