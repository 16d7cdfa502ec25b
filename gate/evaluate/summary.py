"""The reviewer's first line: the verdict and the implementations that decided it, regressed or improved.

    reject: g1_walk handwritten slower than the base at 2 threads (1.98x, time); nothing else changed
    approve: g1_walk handwritten faster than the base at 1, 2 threads (0.41-0.83x); nothing else changed

Built from the stored rows (``ComparisonRecord``), so every renderer (the terminal, the step summary, the PR
comment, the dashboard) shows the same sentence for the same verdict. A row's ratio is head/base or
implementation/baseline: above 1 is slower.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from gate.domain import ComparisonRecord, Decision, Kind, Signal, Verdict

# What a row's ratio compares, as the sentence says it.
VERSUS_BASE = (Kind.HEAD_VS_BASE, Kind.COLLECTOR_HEAD_VS_BASE, Kind.PAIRED_HEAD_VS_BASE)
SHOWN = 3  # groups named before "and N more"


def _against(r: ComparisonRecord) -> str:
    if r.kind in VERSUS_BASE:
        return "the base" if r.kind != Kind.PAIRED_HEAD_VS_BASE else f"the base, relative to {r.baseline}"
    if r.kind == Kind.BEST_THREADS:
        return f"{r.baseline}, each at its best thread count"
    return r.baseline


def _what(r: ComparisonRecord) -> str:
    name = " ".join(x for x in (r.task, r.impl) if x)
    if r.kind in (Kind.COLLECTOR_VS_BASELINE, Kind.COLLECTOR_HEAD_VS_BASE):
        name += " collector step"
    return name or r.machine


def faster(r: ComparisonRecord) -> bool:
    """A passed timed row whose whole interval lies below 1 / (1 + its margin): an improvement worth naming."""
    return (
        r.decision == Decision.PASS
        and r.signal in (Signal.TIME, Signal.COST)
        and r.high is not None
        and r.high < 1 / (1 + r.margin)
    )


def _span(values: list[float]) -> str:
    lo, hi = min(values), max(values)
    return f"{lo:.2f}x" if f"{lo:.2f}" == f"{hi:.2f}" else f"{lo:.2f}-{hi:.2f}x"


def _threads(rows: list[ComparisonRecord]) -> str:
    counts = sorted({r.threads for r in rows if r.threads is not None})
    if not counts:
        return ""
    return f" at {', '.join(map(str, counts))} thread{'s' if counts != [1] else ''}"


def _group(rows: list[ComparisonRecord], word: str) -> str:
    first = rows[0]
    if first.kind in (Kind.CORRECTNESS, Kind.METER, Kind.MACHINE):
        return f"{_what(first)} {first.kind}: {first.reason[:90]}"
    # a slower row says the signal that failed it; a faster one is faster by its time, whatever passed it
    by_cost = [
        r.cost_ratio
        for r in rows
        if word == "slower" and r.signal == Signal.COST and r.cost_ratio is not None
    ]
    by_time = [r.ratio for r in rows if (word == "faster" or r.signal != Signal.COST) and r.ratio is not None]
    how = ", ".join(
        f"{_span(v)}{', ' + name if word == 'slower' else ''}"
        for name, v in (("time", by_time), ("instructions", by_cost))
        if v
    )
    return f"{_what(first)} {word} than {_against(first)}{_threads(rows)}" + (f" ({how})" if how else "")


def _groups(rows: Sequence[ComparisonRecord]) -> dict[tuple, list[ComparisonRecord]]:
    out: dict[tuple, list[ComparisonRecord]] = defaultdict(list)
    for r in rows:
        out[(r.task, r.impl, r.kind in VERSUS_BASE, r.kind)].append(r)
    return out


def _listed(parts: list[str]) -> str:
    shown = "; ".join(parts[:SHOWN])
    return shown + (f"; and {len(parts) - SHOWN} more" if len(parts) > SHOWN else "")


def headline(verdict: Verdict, comparisons: Sequence[ComparisonRecord]) -> str:
    """One sentence: the verdict, then per implementation that decided it what, where and how much."""
    rows = list(comparisons)
    fails = [r for r in rows if r.decision == Decision.FAIL]
    improved = [r for r in rows if faster(r) and r.kind in VERSUS_BASE]
    if verdict == Verdict.ERROR:
        errors = [r for r in rows if r.decision == Decision.ERROR]
        return f"error: {errors[0].reason[:160]}" if errors else "error: nothing was measured"
    if verdict == Verdict.INCONCLUSIVE:
        open_rows = [r for r in rows if r.decision == Decision.INCONCLUSIVE]
        parts = [
            f"{_what(g[0])}{_threads(g)} ({len(g)} row{'s' if len(g) > 1 else ''})"
            for g in _groups(open_rows).values()
        ]
        return f"inconclusive: undecided {_listed(parts)}; more rounds would decide"
    deciding = fails if verdict == Verdict.REJECT else []
    parts = [_group(g, "slower") for g in _groups(deciding).values()]
    named = {(r.task, r.impl) for r in deciding}
    better = [r for r in improved if (r.task, r.impl) not in named]
    parts += [_group(g, "faster") for g in _groups(better).values()]
    repaired = [r for r in rows if r.signal == Signal.REPAIRED and (r.task, r.impl) not in named]
    parts += [f"{_what(g[0])} runs again (it failed on the base)" for g in _groups(repaired).values()]
    if not parts:
        return f"{verdict}: every row within its margin ({len(rows)} rows)"
    undecided = sum(r.decision == Decision.INCONCLUSIVE for r in rows)
    rest = f"{undecided} row{'s' if undecided > 1 else ''} undecided" if undecided else "nothing else changed"
    return f"{verdict}: {_listed(parts)}; {rest}"
