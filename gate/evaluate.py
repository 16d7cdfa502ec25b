"""The gate's evaluation: (base, head) -> approve / reject / inconclusive / error, with a row per cell.

Comparisons (docs/gate.md):

- ``correctness``: a benchmark that raised in asv (parity or construction failure) on the head commit: fail.
- ``impl_vs_baseline``: each policy implementation against the baseline per (machine, task, num_envs, threads),
  from in-process paired samples of the head commit.
- ``best_threads``: per (machine, task, num_envs), each at its own fastest thread count (paired when both are
  fastest at the same count, else unpaired across processes).
- ``head_vs_base``: every policy implementation per cell, head against base, unpaired across processes.
- ``collector_vs_baseline``: the end-to-end collector step (``benchmarks/collector.py``) of each policy
  implementation against the baseline's, paired in one process, with ``collector_margin``; the reason gives
  physics, the kernel and the rest per env-step. A collector that fails to construct, to run, or to follow the
  NumPy reference's rollout is a ``correctness`` row.
- ``collector_head_vs_base``: every policy implementation's collector step, head against base.
- ``paired_head_vs_base``: each compared implementation's paired ratio to the baseline, head against base
  (the ratio is measured inside one process, so the machine's changing speed cancels).

Two signals back a cell (docs/gate.md). **Time**: the wall-time interval above, decided with false-discovery
control. **Cost**: the exact per-call cost under callgrind (``benchmarks/cost.py``, policy ``cost_metric``) of the
same kernel and scale at 1 thread, B/A. Where a cell has both, it **fails when either fails** and **passes when
cost passes and time does not fail**; a cell without cost is decided by time alone. Every row names the signal
that decided it (``signal``: cost, time, or none when nothing was measured).

Comparisons across processes never use a margin below the machine's A/A noise floor (``calibrate``). Missing data
is an error, never a pass: a required machine without results, a cell without samples, a base without results.
"""

from __future__ import annotations

import logging
import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field, fields
from pathlib import Path

from sqlalchemy.orm import Session

from gate import lineage as lineages
from gate import policy as policies
from gate import stats
from gate.domain import (
    AGAINST_BASE,
    COLLECTOR_AGAINST_BASE,
    COLLECTOR_CHECK,
    COLLECTOR_COST,
    COLLECTOR_PAIRED,
    COLLECTOR_PHASES,
    COLLECTOR_STEP,
    COST,
    COST_BENCHMARKS,
    PAIRED,
    TIME,
    ComparisonRecord,
    Verdict,
)
from gate.lineage import Lineage
from gate.lineage import findings as lineage_findings
from gate.policy import Policy
from gate.stats import Decision, signals
from gate.stats.calibrate import MIN_CELLS
from gate.store import queries
from gate.store.models import CellSummary, now, utc

log = logging.getLogger("fusegate")
AGAINST = frozenset({AGAINST_BASE, COLLECTOR_AGAINST_BASE})


@dataclass(kw_only=True)
class Outcome:
    verdict: str
    reasons: list[str]
    comparisons: list[ComparisonRecord]
    policy_source: str
    policy: dict = field(default_factory=dict)


def summary_of(c: CellSummary) -> stats.Summary:
    """The statistics' view of a stored cell summary (a row of ``cell_summary``)."""
    return stats.Summary(
        center=c.center,
        se=c.se,
        low=c.low,
        high=c.high,
        samples=c.samples,
        groups=c.groups,
        between_se=c.between_se,
    )


@dataclass(kw_only=True)
class Row:
    """One cell being judged: what is stored (``ComparisonRecord``) and the estimates that decide it."""

    machine: str
    kind: str
    task: str
    impl: str
    baseline: str
    margin: float
    decision: Decision | str | None = None
    num_envs: int | None = None
    threads: int | None = None
    detail: str = ""
    ratio: float | None = None
    low: float | None = None
    high: float | None = None
    p_value: float | None = None
    q_value: float | None = None
    samples: int = 0
    groups: int = 0
    reason: str = ""
    signal: str = "none"
    cost_ratio: float | None = None
    # working state, not stored
    estimate: stats.Estimate | None = None  # the time estimate (None: decided where found, by no measurement)
    fail_margin: float | None = None
    cost: stats.Estimate | None = None  # the exact cost estimate, when measured
    cost_error: str | None = None
    moments: bool = False  # time from two measurements taken at different moments: never fails on its own

    def record(self) -> ComparisonRecord:
        return ComparisonRecord(**{f.name: str(self.decision) if f.name == "decision" else getattr(self, f.name)
                                   for f in fields(ComparisonRecord)})  # fmt: skip


def _estimate_row(estimate: stats.Estimate, **values) -> Row:
    return Row(
        fail_margin=estimate.fail_margin,
        ratio=estimate.ratio,
        low=estimate.low,
        high=estimate.high,
        margin=estimate.margin,
        p_value=estimate.p_slower,
        samples=estimate.samples,
        groups=estimate.groups,
        estimate=estimate,
        decision=None,
        **values,
    )


def _missing(c: CellSummary | None, what: str) -> str | None:
    if c is None:
        return f"no {what} in the store"
    if c.status == "insufficient":
        return f"{what}: {c.message}"
    if c.status == "failed":
        return f"{what} failed in asv"
    return None


class NoiseFloors:
    """The stored A/A calibrations of some machines (every machine when ``machines`` is None)."""

    def __init__(self, session: Session, machines: Iterable[str] | None = None):
        self._by = {(m, c.design, c.threads): c for m, c in queries.calibrations(session, machines=machines)}

    def cost_fail_margin(self, machine: str, metric: str, margin: float) -> float:
        """The cost signal's fail threshold: the policy's margin, or the machine's A/A floor of that metric if larger."""
        cal = self._by.get((machine, cost_design(metric), 1))
        return margin if cal is None else max(margin, cal.noise_floor)

    def fail_margin(self, machine: str, threads: int, margin: float) -> tuple[float, str]:
        """The margin a cross-process fail must clear: the policy's, or the machine's A/A noise floor if larger."""
        cal = self._by.get((machine, "unpaired", threads))
        if cal is None or cal.noise_floor <= margin:
            return margin, ""
        return cal.noise_floor, f"a fail must clear the machine's A/A noise floor {cal.noise_floor:.1%}"


def evaluate(
    session: Session,
    *,
    base_sha: str,
    head_sha: str,
    policy: Policy,
    policy_source: str,
    extra_impls: Iterable[str] = (),
    lineage: Lineage | None = None,
) -> Outcome:
    """The verdict on (base, head) from the store; ``lineage`` (git's view of the pair, ``gate.lineage``) adds
    the rows about how the head was measured, and lets a head whose subject is the base's be judged on the base's
    results."""
    compare = tuple(dict.fromkeys((*policy.compare, *extra_impls)))
    head_cells = queries.summaries(session, commit_sha=head_sha)
    base_cells = queries.summaries(session, commit_sha=base_sha) if base_sha != head_sha else []
    head_runs = queries.provenances(session, commit_sha=head_sha)
    base_runs = queries.provenances(session, commit_sha=base_sha) if base_sha != head_sha else {}
    reasons = [
        f"policy: {policy_source}" + ("" if not extra_impls else f", plus --impl {', '.join(extra_impls)}")
    ]
    reused = _reuse_base(lineage, head_cells, base_cells, head_runs, base_runs, base_sha, reasons)
    reported = sorted({m for m, _, _, _ in head_cells} | {m for m, _ in head_runs})
    required = list(policy.required_machines) or reported
    rows: list[Row] = []
    if not required:
        reasons.append(f"no results for head {head_sha[:12]} on any machine: nothing was measured")
    for machine in required:
        if machine not in reported:
            rows.append(
                Row(
                    machine=machine,
                    kind="machine",
                    task="",
                    impl="",
                    baseline="",
                    margin=0.0,
                    decision=Decision.ERROR,
                    reason=f"required machine reported no results for head {head_sha[:12]}",
                )
            )
    floors = NoiseFloors(session, required)
    base_by: dict[tuple[str, str], dict] = defaultdict(dict)
    for machine, placement, _label, c in base_cells:
        base_by[(machine, placement)][(c.benchmark, c.task, c.impl, c.num_envs, c.threads)] = c
    head_by: dict[tuple[str, str], dict] = defaultdict(dict)
    labels = {}
    for machine, placement, label, c in head_cells:
        if machine in required:
            head_by[(machine, placement)][(c.benchmark, c.task, c.impl, c.num_envs, c.threads)] = c
            labels[placement] = label
    if base_sha == head_sha:
        reasons.append("base and head are the same commit: no head-vs-base comparison")
    else:
        rows += _hardware_changes(session, base_sha, head_sha, required)
    if lineage is not None and base_sha != head_sha:
        rows += _meter_rows(lineage, head_runs, base_runs, required, labels, base_sha, head_sha)
    dropped: list[str] = []
    for (machine, placement), cells in sorted(head_by.items()):
        where = labels[placement]
        rows += _correctness(machine, where, cells)
        rows += _impl_vs_baseline(machine, where, cells, policy, compare, floors)
        if policy.best_threads:
            rows += _best_threads(machine, where, cells, policy, compare, floors)
        rows += _collector_vs_baseline(machine, where, cells, policy, compare, floors)
        if base_sha != head_sha and (machine, placement) not in reused:
            base = base_by.get((machine, placement))
            lockstep = any(r.get("against") == base_sha for r in head_runs.get((machine, placement), []))
            rows += _head_vs_base(
                machine, where, cells, base, policy, floors, base_sha, dropped=dropped, lockstep=lockstep
            )
            rows += _paired_head_vs_base(machine, where, cells, base, policy, compare, floors)
            if base:  # without a base, the row above says so
                rows += _head_vs_base(machine, where, cells, base, policy, floors, base_sha, collector=True,
                                      dropped=dropped, lockstep=lockstep)  # fmt: skip
    if dropped:
        shown = ", ".join(dropped[:4]) + (f" and {len(dropped) - 4} more" if len(dropped) > 4 else "")
        reasons.append(
            f"{len(dropped)} cell(s) measured on base are not in the head's benchmark profile, not compared: {shown}"
        )
    for machine in sorted(set(required) & set(reported)):
        if not any(r.machine == machine for r in rows):
            rows.append(
                Row(machine=machine, kind="machine", task="", impl="", baseline="", margin=0.0, decision=Decision.ERROR,
                     reason="reported results, but none the policy compares (no paired or timing cells)")
            )  # fmt: skip
    extra = set(compare) - set(policy.compare)
    families = defaultdict(list)  # --impl cells get their own FDR family: they can only add fails
    for r in rows:
        if r.estimate is not None:
            families[r.impl in extra and r.kind != "head_vs_base"].append(r)
    for family in families.values():
        decisions = stats.decide_all([r.estimate for r in family], min_groups=policy.min_rounds)
        for row, (decision, q) in zip(family, decisions, strict=True):
            row.decision, row.q_value = decision, q
            if row.moments and decision is Decision.FAIL:  # a slow phase of the machine can look like this
                row.decision = Decision.INCONCLUSIVE
                row.reason = _join(row.reason, MOMENTS)
    for row in rows:
        _explain(row, policy)
    verdict = _verdict(rows, reasons)
    return Outcome(
        verdict=verdict,
        reasons=reasons,
        comparisons=[r.record() for r in rows],
        policy_source=policy_source,
        policy=policy.to_dict(),
    )


MOMENTS = (
    "raw times of base and head taken at different moments: on a shared machine they cannot fail a row on "
    "their own; the lockstep pass against the base decides (fusegate gate --measure)"
)


def _reuse_base(
    lineage, head_cells, base_cells, head_runs, base_runs, base_sha, reasons
) -> set[tuple[str, str]]:
    """Where the head has no runs but its subject is the base's (and the base's runs say they measured that
    subject): the base's cells stand for the head's there. Returns those (machine, placement)s."""
    if lineage is None or not lineage.same_subject or not base_cells:
        return set()
    measured = {(m, p) for m, p, _, _ in head_cells} | set(head_runs)
    subject = lineage.base["subject"]
    reusable = {
        key
        for key, runs in base_runs.items()
        if key not in measured and runs and all(r.get("subject") == subject for r in runs)
    }
    head_cells += [row for row in base_cells if (row[0], row[1]) in reusable]
    if reusable:
        machines = ", ".join(sorted({m for m, _ in reusable}))
        reasons.append(
            f"the head's subject is the base's (kernels/ and dependency pins {subject}) and so is its meter: judged on "
            f"base {base_sha[:12]}'s results on {machines}, nothing measured again"
        )
    return reusable


def _meter_rows(lineage, head_runs, base_runs, required, labels, base_sha, head_sha) -> list[Row]:
    """How each machine measured the head (and the base): ``gate.lineage.findings`` as ``meter`` rows."""
    rows = []
    for (machine, placement), runs in sorted(head_runs.items()):
        if machine not in required:
            continue
        found = lineage_findings(lineage, runs, side="head", sha=head_sha, base_sha=base_sha)
        found += lineage_findings(lineage, base_runs.get((machine, placement), []), side="base", sha=base_sha,
                                  base_sha=base_sha)  # fmt: skip
        rows += [
            Row(
                machine=machine,
                kind="meter",
                task="",
                impl="",
                baseline="base",
                detail=labels.get(placement, ""),
                margin=0.0,
                decision=f.decision,
                reason=f.reason,
            )
            for f in found
        ]
    return rows


def _hardware_changes(session: Session, base_sha: str, head_sha: str, machines: list[str]) -> list[Row]:
    base, head = (
        queries.fingerprints(session, commit_sha=base_sha),
        queries.fingerprints(session, commit_sha=head_sha),
    )
    return [
        Row(machine=m, kind="machine", task="", impl="", baseline="", margin=0.0, decision=Decision.ERROR,
             reason=f"hardware fingerprint differs between base ({', '.join(sorted(base[m]))}) and head "
             f"({', '.join(sorted(head[m]))}): the two commits were measured on different machines under one name")
        for m in machines
        if m in base and m in head and base[m] != head[m]
    ]  # fmt: skip


def _join(a: str, b: str) -> str:
    return f"{a}; {b}" if a else b


def _cost_cell(
    cells: dict | None, policy: Policy, task: str, impl: str, n: int | None, costs: dict[str, str]
) -> CellSummary | None:
    if cells is None or policy.cost_metric == "none":
        return None
    return cells.get((costs[policy.cost_metric], task, impl, n, 1))


def _with_cost(
    row: Row,
    cells_a: dict | None,
    cells_b: dict,
    impl_a: str,
    *,
    margin: float,
    policy: Policy,
    floors,
    costs: dict[str, str] = COST,
) -> Row:
    """Attach the exact cost comparison B/A to a row with a time estimate: B is the row's implementation in
    ``cells_b``, A is ``impl_a`` in ``cells_a`` (the base's cells, or the head's for the baseline); ``costs``
    names the cost benchmark per metric (the hot slice's, or the collector step's)."""
    if policy.cost_metric == "none" or (row.threads not in (None, 1) and not policy.cost_for_parallel):
        return row
    task, n = row.task, row.num_envs
    a = _cost_cell(cells_a, policy, task, impl_a, n, costs)
    b = _cost_cell(cells_b, policy, task, row.impl, n, costs)
    for side, c in (("A", a), ("B", b)):
        if c is not None and c.status != "ok":
            row.cost_error = f"cost of {row.baseline if side == 'A' else row.impl}: {c.message}"
            return row
    if a is None or b is None:
        missing = row.baseline if a is None else row.impl
        row.reason = _join(row.reason, f"no cost for {missing}: time alone decides")
        return row
    fail_margin = floors.cost_fail_margin(row.machine, policy.cost_metric, margin)
    row.cost = stats.exact_estimate(summary_of(a), summary_of(b), margin=margin, fail_margin=fail_margin)
    row.cost_ratio = row.cost.ratio
    return row


def _explain(row: Row, policy: Policy) -> None:
    """Combine the row's signals into its decision (``stats.signals.combine``), name the signal that decided,
    say why and what next."""
    if row.estimate is None:
        return  # correctness, missing data: decided where it was found, by no measurement
    e, time = row.estimate, row.decision
    time_text = f"time {e.ratio:.3f} [{e.low:.3f}, {e.high:.3f}]"
    if time is Decision.FAIL:
        time_text += f" slower than the {row.fail_margin:.1%} fail margin (q={row.q_value:.2g})"
    elif time is Decision.PASS:
        time_text += f" within {row.margin:.1%}"
    elif row.groups < policy.min_rounds and e.high <= 1 + row.margin:
        time_text += (
            f" within {row.margin:.1%} but from {row.groups} process(es); a pass needs {policy.min_rounds}"
        )
    elif e.low > 1 + row.fail_margin:  # above the margin in its own interval, not across the family
        time_text += (
            f" above the {row.fail_margin:.1%} fail margin, but not past false-discovery control over every "
            f"cell (q={row.q_value:.2g}, {row.groups} processes)"
        )
    else:
        time_text += f" straddles {row.margin:.1%} ({row.groups} processes)"
    cost = row.cost
    plausible = policy.cost_plausible
    if cost is not None and cost.ratio < plausible and e.ratio > 1 - (1 - plausible) / 2:
        # a meter that stopped counting looks like this, a faster kernel does not: its time falls too
        row.cost_error = (
            f"implausible: {policy.cost_metric} fell to {cost.ratio:.3f} of the comparison's while time stayed at "
            f"{e.ratio:.3f} (cost_plausible {plausible:g}): check what the cost measurement counted"
        )
        cost = None
    cost_decision = None if cost is None else stats.decide_exact(cost)
    out = signals.combine(time, e, cost=cost_decision, cost_error=row.cost_error)
    row.decision, row.signal = out.decision, str(out.signal)
    if out.decision is Decision.INCONCLUSIVE:
        budget = "more rounds requested" if row.groups < policy.max_rounds else "budget exhausted"
        time_text += f"; {budget}"
    if row.cost_error:
        why = f"{row.cost_error}; {time_text}"
    elif cost is None:
        why = time_text
    else:
        cost_text = f"{policy.cost_metric} {cost.ratio:.4f}"
        if cost_decision is Decision.FAIL:
            why = f"{cost_text} above the {cost.fail_margin:.1%} cost margin; {time_text}"
        elif time is Decision.FAIL:
            why = f"{time_text}; {cost_text} within {cost.margin:.1%}"
        elif out.decision is Decision.PASS:
            why = f"{cost_text} within {cost.margin:.1%}; {time_text}, not a fail"
        elif cost_decision is Decision.PASS:  # time questions the cost pass
            why = (
                f"{cost_text} within {cost.margin:.1%}, but {time_text}: time says slower, not passed by cost"
            )
        else:  # the runs of one commit disagree about the margin: time decides
            why = f"{cost_text} [{cost.low:.4f}, {cost.high:.4f}] undecided across runs; {time_text}"
    row.reason = _join(row.reason, why)


def _verdict(rows: list[Row], reasons: list[str]) -> str:
    counts = defaultdict(int)
    for row in rows:
        counts[row.decision] += 1
    signals = defaultdict(int)
    for row in rows:
        signals[row.signal] += 1
    reasons.append(
        f"{len(rows)} cells: "
        + ", ".join(f"{counts[d]} {d}" for d in ("pass", "fail", "inconclusive", "error") if counts[d])
        + " (decided by "
        + ", ".join(f"{signals[s]} {s}" for s in ("cost", "time", "none") if signals[s])
        + ")"
    )
    if counts["fail"]:
        reasons.append(
            "reject: a cell is slower than its margin, or a benchmark failed (parity / construction)"
        )
        return Verdict.REJECT
    if counts["error"] or not rows:
        errors = [r for r in rows if r.decision == "error"]
        kinds = defaultdict(int)
        for r in errors:
            kinds[r.kind] += 1
        what = ", ".join(f"{k} {kind}" for kind, k in kinds.items()) or "no cell"
        first = f": {errors[0].reason}" if errors else ""
        reasons.append(f"error: nothing to decide on in {what}{first}; never approved on missing data")
        return Verdict.ERROR
    if counts["inconclusive"]:
        reasons.append("inconclusive: run more rounds on the machines named in the inconclusive cells")
        return Verdict.INCONCLUSIVE
    reasons.append("approve: every cell is within its margin")
    return Verdict.APPROVE


def _correctness(machine: str, placement: str, cells: dict) -> list[Row]:
    """One fail row per cell whose benchmarks raised on the head commit (parity, construction), naming the
    benchmarks and the exception. A failed cost pass is not one, nor a failed lockstep pass against the base
    (either side may have failed it): each is an error of the rows it backs."""
    failed: dict[tuple, list[tuple[str, CellSummary]]] = defaultdict(list)
    for (benchmark, task, impl, n, t), c in sorted(cells.items()):
        if c.status == "failed" and benchmark not in COST_BENCHMARKS and benchmark not in AGAINST:
            failed[(task, impl, n, t)].append((benchmark.rsplit(".", 2)[-2], c))
    rows = []
    for (task, impl, n, t), found in failed.items():
        names = ", ".join(name for name, _ in found)
        message = next((c.message for _, c in found if not c.message.startswith("the benchmark raised")), "")
        # a collector's message ends with the command that reproduces it (benchmarks/collector.py)
        hint = (
            ""
            if all(c.benchmark.startswith("collector.") for _, c in found)
            else ("; fix the kernel (fusegate kernels parity shows the arrays)")
        )
        rows.append(
            Row(
                machine=machine, kind="correctness", task=task, impl=impl, baseline="reference",
                num_envs=n or None, threads=t or None, detail=f"{names} [{placement}]", margin=0.0,
                decision=Decision.FAIL, reason=f"{message or found[0][1].message}{hint}",
            )
        )  # fmt: skip
    return rows


def _phases(cells: dict, task: str, impl: str, n: int, t: int) -> str:
    """Physics, the kernel and the rest of a collector step per env-step (medians over its processes)."""
    found = {phase: cells.get((name, task, impl, n, t)) for phase, name in COLLECTOR_PHASES.items()}
    if any(c is None or c.status != "ok" for c in found.values()):
        return f"{impl}: phases not recorded"
    return f"{impl} " + ", ".join(f"{phase} {math.exp(c.center):.3g}" for phase, c in found.items())


def _collector_vs_baseline(machine, placement, cells, policy, compare, floors) -> list[Row]:
    """Each compared implementation's collector step against the baseline's, from their paired processes."""
    rows = []
    grid = sorted(
        (task, n, t)
        for (b, task, i, n, t) in cells
        if b == COLLECTOR_CHECK and i == policy.baseline and (not policy.threads or t in policy.threads)
    )
    for impl in compare:
        for task, n, t in grid:
            keys = [
                (b, task, i, n, t)
                for b in (COLLECTOR_CHECK, COLLECTOR_PAIRED)
                for i in (impl, policy.baseline)
            ]
            if (COLLECTOR_CHECK, task, impl, n, t) not in cells:
                continue  # not measured for this task (a narrowed run): nothing to compare
            if any(cells[k].status == "failed" for k in keys if k in cells):
                continue  # its correctness rows say why
            where = dict(machine=machine, kind="collector_vs_baseline", task=task, impl=impl,
                         baseline=policy.baseline, num_envs=n, threads=t, detail=placement)  # fmt: skip
            c, margin = cells.get((COLLECTOR_PAIRED, task, impl, n, t)), policy.collector_margin
            problem = _missing(c, "paired collector samples")
            if problem:
                rows.append(Row(**where, margin=margin, decision=Decision.ERROR, reason=problem))
                continue
            phases = f"us per env-step: {_phases(cells, task, impl, n, t)}; {_phases(cells, task, policy.baseline, n, t)}"
            row = _estimate_row(stats.paired_estimate(summary_of(c), margin=margin), **where, reason=phases)
            rows.append(
                _with_cost(row, cells, cells, policy.baseline, margin=margin, policy=policy, floors=floors,
                           costs=COLLECTOR_COST)
            )  # fmt: skip
    return rows


def _grid(cells: dict, impl: str, baseline: str, policy: Policy) -> list[tuple[str, int, int]]:
    """Every (task, num_envs, threads) the baseline was timed at, for the tasks ``impl`` was measured on at all."""
    tasks = {task for (_, task, i, _, _) in cells if i == impl}
    base = {(task, n, t) for (b, task, i, n, t) in cells if b == TIME and i == baseline and task in tasks}
    return sorted(k for k in base if not policy.threads or k[2] in policy.threads)


def _impl_vs_baseline(machine, placement, cells, policy, compare, floors) -> list[Row]:
    rows = []
    for impl in compare:
        for task, n, t in _grid(cells, impl, policy.baseline, policy):
            c = cells.get((PAIRED, task, impl, n, t))
            where = dict(
                machine=machine,
                kind="impl_vs_baseline",
                task=task,
                impl=impl,
                baseline=policy.baseline,
                num_envs=n,
                threads=t,
                detail=placement,
            )
            problem = _missing(c, "paired samples")
            if problem and not (c is not None and c.status == "failed"):  # failures are correctness rows
                rows.append(
                    Row(**where, margin=policy.margin_for(task, n), decision=Decision.ERROR, reason=problem)
                )
            elif not problem:
                margin = policy.margin_for(task, n)
                row = _estimate_row(stats.paired_estimate(summary_of(c), margin=margin), **where)
                rows.append(
                    _with_cost(
                        row, cells, cells, policy.baseline, margin=margin, policy=policy, floors=floors
                    )
                )
    return rows


def _fastest(cells: dict, task: str, impl: str, n: int, policy: Policy) -> CellSummary | None:
    ok = [
        c
        for (b, tk, i, nn, t), c in cells.items()
        if b == TIME
        and (tk, i, nn) == (task, impl, n)
        and c.status == "ok"
        and (not policy.threads or t in policy.threads)
    ]
    return min(ok, key=lambda c: c.center, default=None)


def _best_threads(machine, placement, cells, policy, compare, floors) -> list[Row]:
    rows = []
    for impl in compare:
        for task, n in sorted({(task, n) for task, n, _ in _grid(cells, impl, policy.baseline, policy)}):
            a, b = _fastest(cells, task, policy.baseline, n, policy), _fastest(cells, task, impl, n, policy)
            where = dict(
                machine=machine,
                kind="best_threads",
                task=task,
                impl=impl,
                baseline=policy.baseline,
                num_envs=n,
            )
            margin = policy.margin_for(task, n)
            if a is None or b is None:
                missing = policy.baseline if a is None else impl
                if any(
                    c.status == "failed"
                    for (bm, tk, i, nn, _), c in cells.items()
                    if (bm, tk, i, nn) == (TIME, task, missing, n)
                ):
                    continue  # its correctness rows say why: nothing to time
                rows.append(
                    Row(**where, margin=margin, decision=Decision.ERROR,
                         reason=f"no timing samples of {missing} at any thread count: measure it (asv run)")
                )  # fmt: skip
                continue
            detail = f"{impl} at {b.threads} threads vs {policy.baseline} at {a.threads} [{placement}]"
            paired = cells.get((PAIRED, task, impl, n, a.threads))
            if a.threads == b.threads and paired is not None and paired.status == "ok":
                estimate = stats.paired_estimate(summary_of(paired), margin=margin)
                row = _estimate_row(estimate, **where, threads=a.threads, detail=detail)
            else:
                fail_margin, note = floors.fail_margin(machine, max(a.threads, b.threads), margin)
                estimate = stats.unpaired_estimate(
                    summary_of(a), summary_of(b), margin=margin, fail_margin=fail_margin
                )
                row = _estimate_row(estimate, **where, threads=b.threads, detail=detail, reason=note)
            rows.append(
                _with_cost(row, cells, cells, policy.baseline, margin=margin, policy=policy, floors=floors)
            )
    return rows


def _head_vs_base(
    machine,
    placement,
    cells,
    base,
    policy,
    floors,
    base_sha,
    *,
    collector=False,
    dropped=None,
    lockstep=False,
) -> list[Row]:
    """Every policy implementation's hot-slice time (or, with ``collector``, its collector step), head vs base.

    With ``lockstep`` (the head was timed against this base in lockstep: ``AgainstBase``), a cell's time is the
    paired estimate of its head/base ratios, immune to the machine's slow phases. Without, it is the two
    commits' raw times, taken at different moments: they inform (and may pass) the row but never fail it on
    their own; the row asks for the lockstep pass instead (``moments``).

    A cell measured on base but not on head is an error, unless the head ran its benchmark at other cells: then
    the head's profile no longer has it (e.g. the reference timed at one scale) and it goes to ``dropped``."""
    benchmark_of, kind = (COLLECTOR_STEP, "collector_head_vs_base") if collector else (TIME, "head_vs_base")
    paired_of = COLLECTOR_AGAINST_BASE if collector else AGAINST_BASE
    costs = COLLECTOR_COST if collector else COST
    if not base:
        return [
            Row(
                machine=machine,
                kind="head_vs_base",
                task="",
                impl="",
                baseline="base",
                detail=placement,
                margin=policy.head_vs_base_margin,
                decision=Decision.ERROR,
                reason=f"base {base_sha[:12]} has no results on this machine and placement: measure it (asv continuous base head)",
            )
        ]
    rows = []
    keys = sorted(
        {
            (task, impl, n, t)
            for (b, task, impl, n, t) in cells
            if b == benchmark_of or (lockstep and b == paired_of)
        }
    )
    for task, impl, n, t in keys:
        c = cells.get((benchmark_of, task, impl, n, t))
        if impl not in policy.head_vs_base or (c is not None and c.status == "failed"):
            continue  # failures are correctness rows
        where = _hvb_cell(machine, placement, task, impl, n, t, kind)
        a = base.get((benchmark_of, task, impl, n, t))
        margin = policy.head_vs_base_margin
        paired = cells.get((paired_of, task, impl, n, t)) if lockstep else None
        if paired is not None and paired.status == "failed":
            rows.append(
                Row(**where, margin=margin, decision=Decision.ERROR, reason=f"lockstep: {paired.message}")
            )
            continue
        if paired is not None and paired.status == "ok":
            estimate = stats.paired_estimate(summary_of(paired), margin=margin)
            note = f"timed against the base in lockstep ({paired.groups} worker pairs)"
            moments = False
        else:
            if c is None or c.status != "ok":
                state = "not measured" if c is None else (c.message or c.status)
                rows.append(Row(**where, margin=margin, decision=Decision.ERROR, reason=f"head: {state}"))
                continue
            if a is None or a.status != "ok":
                state = "not measured" if a is None else (a.message or a.status)
                rows.append(
                    Row(
                        **where,
                        margin=margin,
                        decision=Decision.ERROR,
                        reason=f"base {base_sha[:12]}: {state}",
                    )
                )
                continue
            fail_margin, note = floors.fail_margin(machine, t, margin)
            estimate = stats.unpaired_estimate(
                summary_of(a), summary_of(c), margin=margin, fail_margin=fail_margin
            )
            moments = True
        if collector:
            note = _join(note, f"us per env-step: {_phases(cells, task, impl, n, t)}")
        row = _estimate_row(estimate, **where, reason=note)
        row.moments = moments
        rows.append(
            _with_cost(
                row, base, cells, impl, margin=policy.cost_margin, policy=policy, floors=floors, costs=costs
            )
        )
    # A cell missing on the head because its benchmark failed there has a correctness row that says why; a
    # collector step is also missing when the collector it was paired with failed.
    failed = {(task, i, n, t) for (b, task, i, n, t), c in cells.items() if c.status == "failed"}
    failed |= {
        (task, i, n, t)
        for (b, task, _, n, t), c in cells.items()
        if collector and c.status == "failed" and b.startswith("collector.")
        for i in policy.head_vs_base
    }
    measured = {b for (b, *_), c in cells.items() if c.status == "ok"}
    for key, a in sorted(base.items()):
        benchmark, task, impl, n, t = key
        if (
            benchmark == benchmark_of
            and impl in policy.head_vs_base
            and a.status == "ok"
            and key not in cells
            and (paired_of, task, impl, n, t) not in cells
            and (task, impl, n, t) not in failed
        ):
            if dropped is not None and benchmark in measured:
                dropped.append(f"{machine} {task}/{impl} N={n} thr={t}")
                continue
            rows.append(
                Row(
                    **_hvb_cell(machine, placement, task, impl, n, t, kind),
                    margin=policy.head_vs_base_margin,
                    decision=Decision.ERROR,
                    reason="measured on base but not on head",
                )
            )
    return rows


def _ratio_summary(num: CellSummary, den: CellSummary) -> stats.Summary:
    """The exact summary of num / den (log units: a difference; the interval spans both ranges)."""
    a, b = summary_of(num), summary_of(den)
    return stats.Summary(center=a.center - b.center, se=0.0, low=a.low - b.high, high=a.high - b.low,
                         samples=min(a.samples, b.samples), groups=min(a.groups, b.groups))  # fmt: skip


def _paired_head_vs_base(machine, placement, cells, base, policy, compare, floors) -> list[Row]:
    """Each compared implementation's paired ratio to the baseline, head vs base (``paired_head_vs_base``).

    Each ratio is measured inside one process, alternating in milliseconds, so the machine's speed, which
    changes between and within processes on a shared VM, cancels: its head-vs-base interval is
    narrow where the raw times' is not. It asks whether the change made the implementation slower *relative
    to the baseline*; the ``head_vs_base`` rows still judge each one's own time. Its cost is the ratio of the
    two commits' cost ratios (implementation / baseline). Only commits that both have paired samples."""
    rows = []
    margin = policy.head_vs_base_margin
    for (benchmark, task, impl, n, t), c in sorted(cells.items()):
        a = (base or {}).get((PAIRED, task, impl, n, t))
        if benchmark != PAIRED or impl not in compare or c.status != "ok" or a is None or a.status != "ok":
            continue
        estimate = stats.unpaired_estimate(summary_of(a), summary_of(c), margin=margin, fail_margin=margin)
        row = _estimate_row(
            estimate, machine=machine, kind="paired_head_vs_base", task=task, impl=impl, baseline=policy.baseline,
            num_envs=n, threads=t, detail=placement,
            reason=f"{impl} / {policy.baseline} paired in each process, head over base",
        )  # fmt: skip
        rows.append(row)
        if policy.cost_metric == "none" or (t != 1 and not policy.cost_for_parallel):
            continue
        sides = [(cells_, _cost_cell(cells_, policy, task, i, n, COST)) for cells_ in (base, cells)
                 for i in (impl, policy.baseline)]  # fmt: skip
        found = [s for _, s in sides]
        if any(s is None for s in found):
            row.reason = _join(row.reason, "no cost on both commits: time alone decides")
        elif any(s.status != "ok" for s in found):
            row.cost_error = "cost: " + next(s.message for s in found if s.status != "ok")
        else:
            fail_margin = floors.cost_fail_margin(machine, policy.cost_metric, policy.cost_margin)
            row.cost = stats.exact_estimate(
                _ratio_summary(found[0], found[1]), _ratio_summary(found[2], found[3]),
                margin=policy.cost_margin, fail_margin=fail_margin,
            )  # fmt: skip
            row.cost_ratio = row.cost.ratio
    return rows


def _hvb_cell(machine: str, placement: str, task: str, impl: str, n: int, t: int, kind: str) -> dict:
    return dict(
        machine=machine,
        kind=kind,
        task=task,
        impl=impl,
        baseline="base",
        num_envs=n,
        threads=t,
        detail=placement,
    )


def cost_design(metric: str) -> str:
    """The calibration design of a cost metric (one floor per metric: L1 misses are far noisier than Ir)."""
    return f"cost:{metric}"


def cost_pairs(
    session: Session, *, base_sha: str, head_sha: str, metric: str, impls: Iterable[str] | None = None
) -> list[tuple[str, stats.Summary, stats.Summary]]:
    """(machine, base, head) summaries of every cost cell of ``metric`` measured on both commits, one placement."""
    if metric == "none":
        return []
    name = COST[metric]

    def cells(sha):
        return {
            (m, p, c.task, c.impl, c.num_envs): c
            for m, p, _, c in queries.summaries(session, commit_sha=sha)
            if c.benchmark == name and c.status == "ok" and (impls is None or c.impl in impls)
        }

    base, head = cells(base_sha), cells(head_sha)
    return [(key[0], summary_of(base[key]), summary_of(c)) for key, c in sorted(head.items()) if key in base]


def calibrate(
    session: Session, *, base_sha: str, head_sha: str, cost_metric: str = "instructions"
) -> dict[tuple[str, int | str], stats.NoiseFloor]:
    """A/A noise floors from two commits with the same tree, stored for later evaluations: per (machine,
    threads) for time, and per (machine, "cost") for the cost metric (its largest A/A difference)."""
    base = {
        (m, p, c.task, c.impl, c.num_envs, c.threads): c
        for m, p, _, c in queries.summaries(session, commit_sha=base_sha)
        if c.benchmark == TIME and c.status == "ok"
    }
    by: dict[tuple[str, int], list[stats.Estimate]] = defaultdict(list)
    for m, p, _, c in queries.summaries(session, commit_sha=head_sha):
        a = base.get((m, p, c.task, c.impl, c.num_envs, c.threads))
        if c.benchmark == TIME and c.status == "ok" and a is not None:
            by[(m, c.threads)].append(stats.unpaired_estimate(summary_of(a), summary_of(c), margin=0.0))
    cost: dict[str, list[stats.Estimate]] = defaultdict(list)
    for m, a, c in cost_pairs(session, base_sha=base_sha, head_sha=head_sha, metric=cost_metric):
        cost[m].append(stats.exact_estimate(a, c, margin=0.0))
    if not by:
        raise ValueError(
            f"no cell measured on both {base_sha[:12]} and {head_sha[:12]} on one machine and placement"
        )
    floors = {}
    for (machine, threads), estimates in sorted(by.items()):
        floor = stats.noise_floor(estimates)
        queries.save_calibration(
            session, machine=machine, design="unpaired", threads=threads, floor=floor, commit_sha=head_sha
        )
        floors[(machine, threads)] = floor
    for machine, estimates in sorted(cost.items()):
        if len(estimates) >= MIN_CELLS:
            floor = stats.noise_floor(estimates)
            queries.save_calibration(
                session,
                machine=machine,
                design=cost_design(cost_metric),
                threads=1,
                floor=floor,
                commit_sha=head_sha,
            )
            floors[(machine, "cost")] = floor
    return floors


def judge(
    session: Session,
    *,
    repo: Path,
    base_sha: str,
    head_sha: str,
    extra_impls: Iterable[str] = (),
    policy_sha: str | None = None,
) -> Outcome:
    """Evaluate with the policy of the base commit (or ``policy_sha``): reads only, so on SQLite it runs beside
    writers. Anything that goes wrong is an error verdict that says what: never a pass."""
    try:
        policy, source = policies.read_from_base(repo, policy_sha or base_sha)
    except policies.PolicyError as exc:
        outcome = Outcome(
            verdict=Verdict.ERROR, reasons=[f"policy: {exc}"], comparisons=[], policy_source=str(exc)
        )
    else:
        try:
            outcome = evaluate(
                session,
                base_sha=base_sha,
                head_sha=head_sha,
                policy=policy,
                policy_source=source,
                extra_impls=extra_impls,
                lineage=lineages.of(repo, base_sha, head_sha) if base_sha != head_sha else None,
            )
        except Exception as exc:  # fail closed, and say why
            log.exception("evaluation of %s -> %s failed", base_sha, head_sha)
            outcome = Outcome(
                verdict=Verdict.ERROR,
                reasons=[f"policy: {source}", f"the evaluation failed: {type(exc).__name__}: {exc}"],
                comparisons=[],
                policy_source=source,
                policy=policy.to_dict(),
            )
    return outcome


def save(
    session: Session,
    outcome: Outcome,
    *,
    base_sha: str,
    head_sha: str,
    started,
    official: bool = True,
    requested_by: str | None = None,
):
    """Store a judged outcome, stamped with the time its evaluation started, so results that arrived while it ran
    make it stale (``is_stale``). ``official=False``: an ad-hoc evaluation, kept apart from the verdict that the
    bot, the dashboard and ``GET /api/verdicts`` read."""
    return queries.save_evaluation(
        session,
        base_sha=base_sha,
        head_sha=head_sha,
        verdict=str(outcome.verdict),
        policy_source=outcome.policy_source,
        policy=outcome.policy,
        reasons=outcome.reasons,
        comparisons=outcome.comparisons,
        created_at=started,
        official=official,
        requested_by=requested_by,
    )


def evaluate_and_store(session: Session, *, repo: Path, base_sha: str, head_sha: str, **kw):
    """``judge`` and ``save`` in one session (tools and tests; the service judges and saves in two transactions)."""
    started = now()
    outcome = judge(session, repo=repo, base_sha=base_sha, head_sha=head_sha, **kw)
    return save(session, outcome, base_sha=base_sha, head_sha=head_sha, started=started)


def is_stale(session: Session, evaluation) -> bool:
    """True when results of its base or head arrived after the evaluation started."""
    last = queries.last_upload(session, commit_shas={evaluation.base_sha, evaluation.head_sha})
    return last is not None and utc(last) > utc(evaluation.created_at)
