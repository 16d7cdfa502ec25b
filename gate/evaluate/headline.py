"""The reviewer's first line of a verdict: per implementation what got faster, slower and traded, where and how much.

    reject: g1_walk handwritten 1.98x slower at 2 threads (time); nothing else changed
    approve: g1_walk handwritten 2.44x faster at 2 threads; trade-off: +1.6% instructions at 1 thread, time 0.99x;
        nothing else changed

A speedup is a factor above 1; a trade-off is ``gate.evaluate.tradeoff``'s. ``what``, ``against``, ``groups``
and ``improvements`` are how a sentence names and groups rows: the whole summary (``gate.evaluate.summary``)
groups its findings the same way. Built from the stored rows (``ComparisonRecord``); a row's ratio is head/base
or implementation/baseline: above 1 is slower.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from gate.domain.evaluations import ComparisonRecord
from gate.domain.vocabulary import Decision, Kind, Signal, Verdict
from gate.evaluate.tradeoff import UNSHOWN as TRADEOFF_UNSHOWN

# What a row's ratio compares, as the sentence says it.
VERSUS_BASE = (Kind.HEAD_VS_BASE, Kind.COLLECTOR_HEAD_VS_BASE, Kind.PAIRED_HEAD_VS_BASE)
SHOWN = 3  # groups named before "and N more"


def against(r: ComparisonRecord) -> str:
    if r.kind in VERSUS_BASE:
        return "the base" if r.kind != Kind.PAIRED_HEAD_VS_BASE else f"the base, relative to {r.baseline}"
    if r.kind == Kind.BEST_THREADS:
        return f"{r.baseline}, each at its best thread count"
    return r.baseline


def what(r: ComparisonRecord) -> str:
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


def _factor(ratios: list[float]) -> str:
    """A speedup as a factor above 1: head/base 0.41 is ``2.44x``."""
    return _span([1 / r for r in ratios if r > 0])


def _threads(rows: list[ComparisonRecord]) -> str:
    counts = sorted({r.threads for r in rows if r.threads is not None})
    if not counts:
        return ""
    return f" at {', '.join(map(str, counts))} thread{'s' if counts != [1] else ''}"


def _than(r: ComparisonRecord) -> str:
    """What the sentence compares against, unless it is the base (the pull request's own change)."""
    return "" if r.kind in (Kind.HEAD_VS_BASE, Kind.COLLECTOR_HEAD_VS_BASE) else f" than {against(r)}"


def _group(rows: list[ComparisonRecord], word: str) -> str:
    first = rows[0]
    if first.kind in (Kind.CORRECTNESS, Kind.METER, Kind.MACHINE):
        return f"{what(first)} {first.kind}: {first.reason[:90]}"
    where = f"{_than(first)}{_threads(rows)}"
    if word == "faster":  # faster by its time, whatever signal passed it, as a factor above 1
        ratios = [r.ratio for r in rows if r.ratio is not None]
        return f"{what(first)} {_factor(ratios)} faster{where}" if ratios else f"{what(first)} faster{where}"
    by_cost = [r.cost_ratio for r in rows if r.signal == Signal.COST and r.cost_ratio is not None]
    by_time = [r.ratio for r in rows if r.signal != Signal.COST and r.ratio is not None]
    signals = [name for name, v in (("time", by_time), ("instructions", by_cost)) if v]
    if any(TRADEOFF_UNSHOWN in r.reason for r in rows):
        signals.append("the trade-off could not be shown")
    figure = _span(by_time + by_cost) + " " if by_time or by_cost else ""
    return f"{what(first)} {figure}slower{where}" + (f" ({'; '.join(signals)})" if signals else "")


def _traded(rows: list[ComparisonRecord], *, named: bool) -> str:
    """``trade-off: +1.6% instructions at 1 thread, time 0.99x`` (the implementation first unless ``named``)."""
    first = rows[0]
    cost = [r.cost_ratio - 1 for r in rows if r.cost_ratio is not None]
    time = [r.ratio for r in rows if r.ratio is not None]
    lo, hi = (min(cost), max(cost)) if cost else (0.0, 0.0)
    more = f"{lo:+.1%}" if f"{lo:+.1%}" == f"{hi:+.1%}" else f"{lo:+.1%} to {hi:+.1%}"
    text = f"trade-off: {more} instructions{_than(first)}{_threads(rows)}" + (
        f", time {_span(time)}" if time else ""
    )
    if any(r.decision == Decision.FAIL for r in rows):
        text += ', rejected by the policy (tradeoffs = "reject")'
    return text if named else f"{what(first)} {text}"


def groups(
    rows: Sequence[ComparisonRecord], *, by_decision: bool = False, by_tradeoff: bool = False
) -> dict[tuple, list[ComparisonRecord]]:
    out: dict[tuple, list[ComparisonRecord]] = defaultdict(list)
    for r in rows:
        key = (r.task, r.impl, r.kind in VERSUS_BASE, r.kind)
        key = (*key, r.decision) if by_decision else key
        out[(*key, traded(r)) if by_tradeoff else key].append(r)
    return out


def _listed(parts: list[str]) -> str:
    shown = "; ".join(parts[:SHOWN])
    return shown + (f"; and {len(parts) - SHOWN} more" if len(parts) > SHOWN else "")


def traded(r: ComparisonRecord) -> bool:
    """A trade-off row (``gate.evaluate.tradeoff``) that is decided: passed, or failed by the policy."""
    return r.signal == Signal.TRADEOFF and r.decision in (Decision.PASS, Decision.FAIL)


def improvements(
    rows: Sequence[ComparisonRecord], named: set[tuple[str, str]] = frozenset()
) -> tuple[list[list[ComparisonRecord]], list[list[ComparisonRecord]]]:
    """The groups of rows faster than the base and of rows running again where the base failed, of the
    implementations not ``named`` (task, impl)."""
    faster_rows = [r for r in rows if faster(r) and r.kind in VERSUS_BASE and (r.task, r.impl) not in named]
    repaired = [r for r in rows if r.signal == Signal.REPAIRED and (r.task, r.impl) not in named]
    return list(groups(faster_rows).values()), list(groups(repaired).values())


def headline(verdict: Verdict, comparisons: Sequence[ComparisonRecord]) -> str:
    """One sentence: the verdict, then per implementation what got faster, slower and traded, where and how
    much (the implementations that decided a reject first)."""
    rows = list(comparisons)
    if verdict == Verdict.ERROR:
        errors = [r for r in rows if r.decision == Decision.ERROR]
        return f"error: {errors[0].reason[:160]}" if errors else "error: nothing was measured"
    if verdict == Verdict.INCONCLUSIVE:
        open_rows = [r for r in rows if r.decision == Decision.INCONCLUSIVE]
        parts = [
            f"{what(g[0])}{_threads(g)} ({len(g)} row{'s' if len(g) > 1 else ''})"
            for g in groups(open_rows).values()
        ]
        return f"inconclusive: undecided {_listed(parts)}; more rounds would decide"
    slower = (
        [r for r in rows if r.decision == Decision.FAIL and not traded(r)]
        if verdict == Verdict.REJECT
        else []
    )
    better, repaired = improvements(rows)
    by_impl: dict[tuple[str, str], list[str]] = defaultdict(list)
    own = {(g[0].task, g[0].impl) for g in better if g[0].kind != Kind.PAIRED_HEAD_VS_BASE}
    for g in better:  # an implementation's own speedup; relative to the baseline only when it has none
        if g[0].kind != Kind.PAIRED_HEAD_VS_BASE or (g[0].task, g[0].impl) not in own:
            by_impl[g[0].task, g[0].impl].append(_group(g, "faster"))
    for g in groups(slower).values():
        by_impl[g[0].task, g[0].impl].append(_group(g, "slower"))
    for g in groups([r for r in rows if traded(r)]).values():
        key = (g[0].task, g[0].impl)
        by_impl[key].append(_traded(g, named=bool(by_impl[key])))
    for g in repaired:
        by_impl[g[0].task, g[0].impl].append(f"{what(g[0])} runs again (it failed on the base)")
    for g in groups([r for r in rows if r.decision == Decision.ACCEPTED]).values():
        by_impl[g[0].task, g[0].impl].append(f"{_group(g, 'slower')}, accepted on record")
    deciding = (
        {(r.task, r.impl) for r in rows if r.decision == Decision.FAIL}
        if verdict == Verdict.REJECT
        else set()
    )
    order = sorted(by_impl, key=lambda key: key not in deciding)  # stable: the rows' order otherwise
    parts = [part for key in order for part in by_impl[key]]
    if not parts:
        return f"{verdict}: every row within its margin ({len(rows)} rows)"
    undecided = sum(r.decision == Decision.INCONCLUSIVE for r in rows)
    rest = f"{undecided} row{'s' if undecided > 1 else ''} undecided" if undecided else "nothing else changed"
    return f"{verdict}: {_listed(parts)}; {rest}"
