"""The gate's one job: measure base and head, judge, ask for rounds where undecided, judge again.

``fusegate gate --measure`` (``measured_verdict``) and ``fusegate run`` (``more_rounds``) call it; what measures is
the caller's ``Meter`` (the command line's: asv with a progress line and the meter's quick profile), so a job
with another way to run asv reuses the same loop. What a round asks for derives from the row kinds' declarations
(``gate.runner.rounds``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

from gate.domain.vocabulary import Decision, Signal, Verdict
from gate.policy import Policy, judged_by
from gate.runner import asvrun, rounds
from gate.runner import sides as measuring
from gate.runner.judge import Judge
from gate.runner.sides import Side


class Placement(Protocol):
    """Where asv runs on this machine (``gate.cli.placements.PlacementRun``)."""

    machine: str | None
    label: str

    def asv_args(self) -> tuple[str, ...]: ...

    def environment(self) -> dict[str, str]: ...


class Meter(Protocol):
    """How this machine measures a side: what the use case asks of it, never names."""

    def prepare(self) -> None:
        """What measuring needs first (the cost pass's valgrind)."""

    def measure(self, side: Side) -> None:
        """The quick profile on ``side`` at every placement."""

    def asv(self, calls: list, *, side: Side, env: dict | None = None) -> float:
        """Run asv on ``side`` once per (extra arguments, ``asvrun.Call``, environment); the wall seconds."""


@dataclass(frozen=True, kw_only=True)
class Pair:
    """What ``fusegate gate --measure`` judges: resolved commits, the store, where results go, the placements,
    until when rounds may run (monotonic) and the command that goes on."""

    repo: Path
    base: str
    head: str
    url: str
    results: Path
    where: list[Placement]
    deadline: float
    again: str
    extra_impls: tuple[str, ...] = ()


def measured_verdict(pair: Pair, meter: Meter, console):
    """The quick profile on base and head where the store has no results of them (the base in its own tree,
    the head's subject with the base's meter), the verdict, then more rounds on both for undecided cells. A head
    whose subject is the base's is not measured: the base's results judge it. The same call again goes on where
    it stopped."""
    from gate import lineage as lineages

    repo, base, head, results = pair.repo, pair.base, pair.head, pair.results
    say = console.print
    lineage = lineages.of(repo, base, head) if base != head else None
    if lineage is not None and lineage.same_subject:
        say(
            f"  head {head[:12]}'s subject is base {base[:12]}'s (kernels/ and the dependency pins, "
            f"{lineage.head['subject']}): the base's results judge it, nothing is measured for the head"
        )
        sides = {"base": measuring.side_of(repo, "base", base, results)}
    else:
        plain = lambda line: console.print(line, markup=False, highlight=False, soft_wrap=True)  # noqa: E731
        sides = {"head": measuring.side_of(repo, "head", head, results, meter=base, say=plain)}
        if base != head:
            base_side = measuring.side_of(repo, "base", base, results)
            sides = {"base": base_side, "head": replace(sides["head"], against=base_side)}
    if lineage is not None and lineage.meter_changes:
        say(
            f"  head changes the meter ({', '.join(lineage.meter_changes[:4])}"
            f"{' ...' if len(lineage.meter_changes) > 4 else ''}): it is measured with the base's"
        )
    measured = _stored(pair, sides, lineage)
    if not all(measured.values()):
        meter.prepare()
    for name, side in sides.items():
        if measured[name]:
            say(f"  {name} {side.sha[:12]} has results in {pair.url}: only undecided cells get rounds")
        else:
            meter.measure(side)
    judge = Judge(pair.url, repo, base, head, list(sides.values()), console, fallback=False)
    evaluation = judge(extra_impls=pair.extra_impls)
    return more_rounds(
        judge, evaluation, pair.where, pair.deadline, sides, console, meter=meter, again=pair.again
    )


def _stored(pair: Pair, sides: dict[str, Side], lineage) -> dict[str, bool]:
    """Whether the store has each side's runs on this machine, taken by the base's meter (or, unrecorded, when
    it is the head's)."""
    from gate.store import db, queries

    here = {at.machine for at in pair.where}  # a commit's runs on other machines do not time it on this one
    meter = lineage.base["meter"] if lineage is not None else None
    measured = {}
    with db.transaction(pair.url) as session:
        for name, side in sides.items():
            found_here = queries.provenances(session, commit_sha=side.sha).items()
            runs = [p for (m, _), found in found_here if m in here or None in here for p in found]
            measured[name] = bool(runs) and (meter is None or any(r.get("meter") == meter for r in runs))
    return measured


def more_rounds(
    judge: Judge,
    evaluation,
    where: list[Placement],
    deadline: float,
    sides: dict[str, Side],
    console,
    *,
    meter: Meter,
    again: str,
):
    """Add ``rounds.ROUNDS_STEP`` processes to the benchmarks behind every undecided cell the budget allows, on
    each side that has samples in it and at the placement (``where``) whose machine the row is of, until the
    verdict is decided, the budget is spent or ``deadline`` (monotonic) would pass; then say how to go on
    (``again``)."""
    step = rounds.ROUNDS_STEP
    # A head whose subject is the base's is judged on the base's results: every undecided row is the base's.
    judged_on_base = "head" not in sides
    while evaluation.verdict == Verdict.INCONCLUSIVE:
        policy = judged_by(evaluation)
        todo = {
            (name, k): rounds.open_benches(
                evaluation.comparisons,
                policy,
                at.machine,
                side="head" if name == "head" or judged_on_base else "base",
            )
            for name in sides
            if name == "head" or judge.base != judge.head
            for k, at in enumerate(where)
        }
        todo = {key: chosen for key, chosen in todo.items() if chosen}
        for name, k in [
            key for key in todo if not measuring.has_results(sides[key[0]], where[key[1]].machine)
        ]:
            # asv --append-samples would start a results file with the new samples only, and ingesting it would
            # replace the run the store has (measured from another checkout) with them
            console.print(
                f"  {name} {sides[name].sha[:12]} has results in the store but none in {sides[name].results}: "
                "no rounds for it here (measure it again from this checkout to add some)",
                soft_wrap=True,
            )
            del todo[name, k]
        open_rows = [c for c in evaluation.comparisons if c.decision == Decision.INCONCLUSIVE]
        if not todo:
            console.print(f"  {len(open_rows)} cell(s) undecided with the policy's budget of rounds spent")
            return evaluation
        per = {name: measuring.per_process(sides[name]) for name, _ in todo}
        steps = {key: rounds.seconds(chosen, per[key[0]]) for key, chosen in todo.items()}
        expected = rounds.expected(steps.values())
        if time.monotonic() + expected > deadline:
            # Not all of them fit: the rows most likely to decide the verdict first (a fail decides it alone)
            machines = {key: where[key[1]].machine for key in steps}
            fitted = _most_telling(
                open_rows, steps, deadline - time.monotonic(), policy, machines, every=evaluation.comparisons
            )
            if not fitted:
                console.print(
                    f"  {len(open_rows)} cell(s) undecided; another {step} processes each would take about "
                    f"{expected / 60:.1f} min, past --max-minutes. To add them: [bold]{again}[/]",
                    soft_wrap=True,
                )
                return evaluation
            steps, todo = fitted, {key: list(chosen) for key, chosen in fitted.items()}
            expected = rounds.expected(steps.values())
            console.print(
                f"  not every undecided cell's rounds fit in --max-minutes: {sum(map(len, todo.values()))} "
                "selection(s) of the rows nearest a decision first"
            )
        console.print(
            f"[bold]more rounds[/]: {len(open_rows)} undecided cell(s), {step} more processes of "
            + ", ".join(
                f"{len(p)} benchmark selection(s) on {name}"
                + (f" at {where[k].label}" if where[k].label else "")
                for (name, k), p in todo.items()
            )
            + f", about {expected / 60:.1f} min"
        )
        for (name, k), chosen in todo.items():
            append(meter, sides[name], where[k], chosen, steps[name, k])
        before = _open_groups(evaluation)
        evaluation = judge(quiet=True)
        if evaluation.verdict == Verdict.INCONCLUSIVE and _open_groups(evaluation) == before:
            # e.g. rows head over base whose fewer processes are a base that cannot take rounds here
            console.print(
                f"  the rounds added no process to the {len(before)} undecided cell(s): no more rounds here. "
                f"To add them where both sides can: [bold]{again}[/]",
                soft_wrap=True,
            )
            return evaluation
        counts = {
            d: sum(c.decision == d for c in evaluation.comparisons)
            for d in (Decision.PASS, Decision.FAIL, Decision.INCONCLUSIVE)
        }
        console.print(f"  now {evaluation.verdict}: " + ", ".join(f"{n} {d}" for d, n in counts.items()))
    return evaluation


def append(meter: Meter, side: Side, at: Placement, chosen: list, seconds: dict) -> None:
    """``rounds.ROUNDS_STEP`` more processes of the ``chosen`` selections on ``side`` at placement ``at``,
    appended to its results; the lockstep pass times only the open cells."""
    step = rounds.ROUNDS_STEP
    extra = ("--append-samples", "-a", f"rounds={step}", *rounds.bench_args(chosen))
    cells = rounds.duet_cells(chosen)
    call = asvrun.Call({s.pattern: secs for s, secs in seconds.items()}, step)
    meter.asv(
        [((*extra, *at.asv_args()), call, at.environment())],
        side=side,
        env={"FUSEGATE_BENCH_DUET_CELLS": cells} if cells else None,
    )


def _open_groups(evaluation) -> dict:
    """Each undecided row's processes (its groups): unchanged after a round, the round decided nothing."""
    return {
        (c.machine, c.kind, c.task, c.impl, c.baseline, c.num_envs, c.threads, c.detail): c.groups
        for c in evaluation.comparisons
        if c.decision == Decision.INCONCLUSIVE
    }


def _most_telling(rows, steps: dict, left_s: float, policy: Policy, machines: dict, every=()) -> dict:
    """The subset of ``steps`` ((side, placement) -> selection -> seconds) that fits in ``left_s``, taken row by
    row in order of evidence: the smallest p-value of "no slower than the fail margin" first (a row whose time
    says slower is the nearest to failing, and one fail decides the verdict), rows without one last. A row's
    benchmarks run at the placement of its machine (``machines``: key -> asv machine name, None for any). A pending
    trade-off comes first, with the rows of ``every`` (all the evaluation's rows) whose speedup would prove it."""
    chosen: dict = {}
    spent = 0.0

    def evidence(row) -> tuple[bool, bool, float]:
        # a pending trade-off first (its rounds include the speedup that would prove it), then by p-value
        p = getattr(row, "p_value", None)
        return getattr(row, "signal", None) != Signal.TRADEOFF, p is None, 1.0 if p is None else p

    for row in sorted(rows, key=evidence):
        asked = [
            s
            for r in [*rounds.tradeoff_siblings(row, list(every), policy.max_rounds), row]
            for s in rounds.benches_for(r, policy.baseline)
        ]
        wanted = {
            key: {s: secs for s, secs in found.items() if s in asked}
            for key, found in steps.items()
            if machines.get(key) is None or machines[key] == row.machine
        }
        new = {
            key: {s: secs for s, secs in found.items() if s not in chosen.get(key, {})}
            for key, found in wanted.items()
        }
        cost = sum(
            sum(found.values()) + (rounds.START_S if found and key not in chosen else 0.0)
            for key, found in new.items()
        )
        if not any(new.values()) or spent + cost > left_s:
            continue
        spent += cost
        for key, found in new.items():
            if found:
                chosen.setdefault(key, {}).update(found)
    return chosen
