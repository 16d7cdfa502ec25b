"""Measuring commits for ``fusegate run`` and ``fusegate gate --measure``: asv on a commit in its own tree with
a progress line, the verdict from what arrived, and more rounds for the cells still undecided."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from gate import domain, provenance
from gate.cli import output, placements
from gate.cli.options import judged_pair, repo_path, store_url
from gate.cli.placements import PlacementRun
from gate.domain import Decision, Signal, Verdict
from gate.meter.profile import Profile

if TYPE_CHECKING:
    from gate.runner.envs import Env

ROUNDS_STEP = 2  # processes added per undecided cell and pass


def asv_machine(say) -> str | None:
    """This machine's asv name; registers it with asv's defaults first, without asv's questionnaire."""
    path = Path.home() / ".asv-machine.json"
    registered = not path.exists()
    if registered:
        done = subprocess.run(
            [sys.executable, "-m", "asv", "machine", "--yes"], capture_output=True, text=True, check=False
        )
        if done.returncode:
            raise ValueError(f"asv machine --yes failed: {(done.stderr or done.stdout).strip()[-500:]}")
    try:  # a placement's name (<machine>__node0) is not the machine's
        names = [k for k in json.loads(path.read_text()) if k != "version" and domain.host_of(k) == k]
    except (OSError, ValueError):
        return None
    if names and registered:
        say(f"registered this machine with asv as {names[0]!r} ({path}; asv machine --machine NAME renames)")
    return names[0] if names else None


@dataclass(frozen=True)
class Side:
    """A commit asv measures and the tree it measures it in (``gate.runner.trees``): the repository for the
    checked-out HEAD measured with its own meter, else a git worktree under ``.fusegate/worktrees/`` (a head with
    the base's meter: the head's ``kernels/`` and the base's everything else) whose code the benchmark processes
    import, with this interpreter's environment (``asv run -E existing``), or for a head that changes the
    dependency pins, an environment with its pins (``gate.runner.envs``). Either way the benchmark processes
    import the tree's code (ASV_PYTHONPATH), not what the interpreter has installed."""

    name: str  # "head" or "base"
    sha: str
    tree: Path
    results: Path
    meter_sha: str | None = None  # whose meter measures it (None: its own)
    against: Side | None = None  # the base it is timed against in lockstep (the AgainstBase suites)
    env: Env | None = None  # the environment of the head's pins (None: this interpreter's)

    def log(self) -> Path:
        return Path(".fusegate") / "logs" / f"asv-{self.sha[:12]}.log"

    @property
    def python(self) -> str:
        """The interpreter its benchmark processes and its lockstep worker run on."""
        return str(self.env.python) if self.env is not None else sys.executable


def say_plainly(console):
    """A ``say`` for ``side_of``: lines printed as they are (a requirement's ``[extra]`` is no markup)."""
    return lambda line: console.print(line, markup=False, highlight=False, soft_wrap=True)


def side_of(
    repo: Path, name: str, sha: str, results: Path, *, meter: str | None = None, say=lambda line: None
) -> Side:
    """``sha`` in the tree that measures it with ``meter``'s meter (default its own); the results of the
    repository's own tree go to ``results``, a worktree's to its own ``.asv/results``. Measured with another
    commit's meter and pinning other dependencies than that commit: in an environment of its pins, made or
    reused here (``gate.runner.envs``; ``say`` tells where)."""
    from gate.runner import asvrun, envs, trees

    asvrun.check_meter(repo, meter or sha)  # a team's repository: the fusegate that runs is the one it pins
    tree = trees.measurement_tree(repo, sha, meter=meter)
    where = results if tree.path == repo else tree.path / ".asv" / "results"
    env = None
    if meter is not None and meter != sha:
        env = envs.of_commits(repo, meter, sha)
    if env is not None:
        envs.ensure(env, say=say)
        say(
            f"  {name} pins {env.describe()}: measured in {_shown(env.path, repo)} "
            f"(the base on {sys.executable})"
        )
    return Side(name, sha, tree.path, where, meter_sha=tree.meter_commit if tree.composite else None, env=env)


def _shown(path: Path, repo: Path) -> str:
    try:
        return str(path.relative_to(Path(repo).resolve()))
    except ValueError:
        return str(path)


def _asv_env(side: Side, repo: Path) -> dict:
    env = {
        **os.environ,
        "ASV_COMMIT": side.sha,
        "FUSEGATE_BENCH_PROFILE": Profile.from_env().name,
        "FUSEGATE_BENCH_GATE": "1",
    }
    # The tree's kernels and meter, never the ones the interpreter has installed (an editable install of another
    # checkout would be measured in their place): the benchmark processes check it (benchmarks/_common.py). A
    # tree without the meter (a team's repository) is measured by this fusegate, imported after it; the suites
    # are told which tree they measure (its subject, sidecar and policy), whatever this process inherited.
    env["ASV_PYTHONPATH"] = os.pathsep.join(provenance.import_path(side.tree))
    env["FUSEGATE_BENCH_TREE"] = str(Path(side.tree).resolve())
    if side.against is not None:
        env["FUSEGATE_BENCH_AGAINST"] = str(side.against.tree)
        env["FUSEGATE_BENCH_AGAINST_COMMIT"] = side.against.sha
        # the base's lockstep worker on the base's interpreter, the head's own on the head's
        env["FUSEGATE_BENCH_AGAINST_PYTHON"] = side.against.python
    return env


def _asv_calls(calls: list, *, side: Side, repo: Path, console, env: dict | None = None) -> float:
    """Run asv on ``side`` once per (extra arguments, ``asvrun.Call``[, that call's environment]) with a
    progress line; returns the wall seconds."""
    from gate.runner import asvrun

    run = (
        sys.executable,
        "-m",
        "asv",
        "run",
        "-E",
        f"existing:{side.python}",
        "--set-commit-hash",
        side.sha,
        "--record-samples",
    )
    config = asvrun.outside_config(side.tree, side.results)  # None: the tree's own asv.conf.json
    run = (*run, "--config", str(config)) if config else run
    estimate = asvrun.Estimate([call[1] for call in calls])
    log = side.log().resolve()
    t0 = time.monotonic()
    with console.status("starting asv") as status:
        for i, (extra, _, *own) in enumerate(calls):
            if i:
                estimate.next_call()
            code = asvrun.run(
                (*run, *extra),
                env={**_asv_env(side, repo), **(env or {}), **(own[0] if own else {})},
                cwd=side.tree,
                log=log,
                estimate=estimate,
                say=lambda line: console.print(f"  {line}", highlight=False),
                status=status.update,
            )
            if code not in (0, 2):  # 2: a benchmark failed; the gate reports it as a correctness failure
                raise ValueError(f"asv run exited with {code}; its output: {log}")
    return time.monotonic() - t0


def _profile_calls(rounds: int | None, results: Path, where: PlacementRun, *, against: bool = False) -> list:
    """The quick profile's asv calls at one placement: the exact suites once, the timed ones in ``rounds``
    processes per cell (None: each class's own), and for a head with a base to time against, the lockstep pass;
    the collector's suites at the first placement only."""
    from gate.runner import asvrun

    collector = where.first
    paired = Profile.from_env({**os.environ, **where.env}).paired_rounds
    runs = domain.gate_asv_runs(rounds, paired_rounds=paired, collector=collector)
    runs += [("--bench", domain.gate_bench_against(collector=collector))] if against else []
    once = (domain.gate_asv_runs(collector=collector)[0][1], domain.gate_bench_against(collector=collector))
    return [
        (
            (*extra, *where.asv_args()),
            asvrun.plan(extra[1], 1 if extra[1] in once else rounds or 3, results, where.machine),
            where.environment(),
        )
        for extra in runs
    ]


def time_profile(results: Path, commit: str, *, since=None, total_s=None) -> list:
    from gate.runner import timeprofile

    return timeprofile.profile(results, results.parent / "fusegate", commit, since=since, total_s=total_s)


def measure(
    side: Side, rounds: int, where: list[PlacementRun], repo: Path, console, *, profile_time: bool
) -> None:
    """The quick profile on one side at every placement of ``where`` (``placements.runs``), then where its time
    went."""
    meter = f" with base {side.meter_sha[:12]}'s meter" if side.meter_sha else ""
    if side.env is not None:
        from rich.markup import escape

        meter += f", its pins ({escape(side.env.describe())}) in {side.env.path.name}"
    at = f" at {len(where)} placements ({', '.join(w.describe() for w in where)})" if len(where) > 1 else ""
    console.print(
        f"[bold]asv[/] quick profile on {side.name} {side.sha[:12]}{meter}{at} (hot slice, paired ratios, "
        f"collector, cost); asv's output: {side.log()}",
        soft_wrap=True,
    )
    since = time.time()
    calls = [
        c for w in where for c in _profile_calls(rounds, side.results, w, against=side.against is not None)
    ]
    wall = _asv_calls(calls, side=side, repo=repo, console=console)
    rows = time_profile(side.results, side.sha, since=since, total_s=wall)
    if profile_time:
        console.print(output.time_profile_table(rows, f"Where the {wall:.0f} s of asv went (seconds)"))
    else:
        top = ", ".join(f"{r.name} {r.wall_s:.0f} s" for r in rows[:3])
        console.print(f"  asv took {wall:.0f} s; most: {top} (--profile-time: all of it)")


def _per_process(results: Path, sha: str) -> dict[str, float]:
    """Seconds per benchmark process of each timed class in the commit's results (the next pass's estimate)."""
    return {
        r.name: (r.wall_s / r.processes)
        for r in time_profile(results, sha)
        if r.processes and not r.name.startswith("(")
    }


class Judge:
    """Ingest every side's results and evaluate (base, head) again, as often as rounds are added."""

    def __init__(
        self, url: str, repo: Path, base: str, head: str, sides: list[Side], console, *, fallback: bool
    ):
        self.url, self.repo, self.base, self.head, self.console = url, repo, base, head, console
        self.policy_sha = base  # the policy always comes from the requested base, even without results
        self.sides, self.fallback = sides, fallback
        self.machines: list[str] = []

    def __call__(self, *, quiet: bool = False, extra_impls=()):
        from gate.services import results, verdicts
        from gate.store import db, queries

        self.machines = []
        for side in self.sides:
            if not side.results.is_dir():
                continue
            arrival = results.arrived_from_directory(self.url, repo=self.repo, results=side.results)
            for machine, report in arrival.reports.items():
                if not quiet:
                    self.console.print(
                        f"  {side.name} {machine}: {report.stored} run(s) stored, {report.unchanged} unchanged"
                    )
                self.machines.append(machine)
        with db.transaction(self.url, write=False) as session:
            base_unmeasured = not queries.summaries(session, commit_sha=self.base)
        if self.fallback and self.base != self.head and base_unmeasured:
            if not quiet:
                self.console.print(
                    f"  base {self.base[:12]} has no results yet: judging HEAD's kernels only "
                    f"(fusegate gate --base {self.base[:12]} --measure measures both)"
                )
            self.base = self.head
        return verdicts.evaluate(
            self.url,
            repo=self.repo,
            base_sha=self.base,
            head_sha=self.head,
            policy_sha=self.policy_sha,
            extra_impls=extra_impls,
        )


def more_rounds(
    judge: Judge,
    evaluation,
    where: list[PlacementRun],
    deadline: float,
    sides: dict[str, Side],
    repo: Path,
    console,
    *,
    again: str,
):
    """Add ``ROUNDS_STEP`` processes to the benchmarks behind every undecided cell the budget allows, on each
    side that has samples in it and at the placement (``where``) whose machine the row is of, until the verdict
    is decided, the budget is spent or ``deadline`` (monotonic) would pass; then say how to go on (``again``)."""
    from gate.runner import asvrun, rounds

    # A head whose subject is the base's is judged on the base's results: every undecided row is the base's.
    judged_on_base = "head" not in sides
    while evaluation.verdict == Verdict.INCONCLUSIVE:
        todo = {
            (name, k): rounds.open_benches(
                evaluation.comparisons,
                evaluation.policy,
                at.machine,
                side="head" if name == "head" or judged_on_base else "base",
            )
            for name in sides
            if name == "head" or judge.base != judge.head
            for k, at in enumerate(where)
        }
        todo = {key: patterns for key, patterns in todo.items() if patterns}
        for name, k in [key for key in todo if not has_results(sides[key[0]], where[key[1]].machine)]:
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
        per = {name: _per_process(sides[name].results, sides[name].sha) for name, _ in todo}
        steps = {
            key: {p: ROUNDS_STEP * per[key[0]].get(rounds.class_of(p), 10.0) for p in patterns}
            for key, patterns in todo.items()
        }
        expected = sum(sum(s.values()) + 15.0 for s in steps.values())  # +asv's start and the parity check
        if time.monotonic() + expected > deadline:
            # Not all of them fit: the rows most likely to decide the verdict first (a fail decides it alone)
            machines = {key: where[key[1]].machine for key in steps}
            fitted = _most_telling(
                open_rows,
                steps,
                deadline - time.monotonic(),
                evaluation.policy,
                machines,
                every=evaluation.comparisons,
            )
            if not fitted:
                console.print(
                    f"  {len(open_rows)} cell(s) undecided; another {ROUNDS_STEP} processes each would take about "
                    f"{expected / 60:.1f} min, past --max-minutes. To add them: [bold]{again}[/]",
                    soft_wrap=True,
                )
                return evaluation
            steps, todo = fitted, {key: list(chosen) for key, chosen in fitted.items()}
            expected = sum(sum(s.values()) + 15.0 for s in steps.values())
            console.print(
                f"  not every undecided cell's rounds fit in --max-minutes: {sum(map(len, todo.values()))} "
                "selection(s) of the rows nearest a decision first"
            )
        console.print(
            f"[bold]more rounds[/]: {len(open_rows)} undecided cell(s), {ROUNDS_STEP} more processes of "
            + ", ".join(
                f"{len(p)} benchmark selection(s) on {name}"
                + (f" at {where[k].label}" if where[k].label else "")
                for (name, k), p in todo.items()
            )
            + f", about {expected / 60:.1f} min"
        )
        for (name, k), patterns in todo.items():
            extra = ("--append-samples", "-a", f"rounds={ROUNDS_STEP}", *rounds.bench_args(patterns))
            cells = rounds.duet_cells(patterns)  # the lockstep pass times only the open cells
            _asv_calls(
                [
                    (
                        (*extra, *where[k].asv_args()),
                        asvrun.Call(steps[name, k], ROUNDS_STEP),
                        where[k].environment(),
                    )
                ],
                side=sides[name],
                repo=repo,
                console=console,
                env={"FUSEGATE_BENCH_DUET_CELLS": cells} if cells else None,
            )
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


def _open_groups(evaluation) -> dict:
    """Each undecided row's processes (its groups): unchanged after a round, the round decided nothing."""
    return {
        (c.machine, c.kind, c.task, c.impl, c.baseline, c.num_envs, c.threads, c.detail): c.groups
        for c in evaluation.comparisons
        if c.decision == Decision.INCONCLUSIVE
    }


def has_results(side: Side, machine: str | None) -> bool:
    """Whether ``side``'s asv results directory holds its commit's results on ``machine`` (None: any), the
    file rounds append to."""
    pattern = f"{machine or '*'}/{side.sha[:8]}-*.json"
    return any(side.results.glob(pattern)) if side.results.is_dir() else False


def _most_telling(rows, steps: dict, left_s: float, policy: dict, machines: dict, every=()) -> dict:
    """The subset of ``steps`` ((side, placement) -> pattern -> seconds) that fits in ``left_s``, taken row by
    row in order of evidence: the smallest p-value of "no slower than the fail margin" first (a row whose time
    says slower is the nearest to failing, and one fail decides the verdict), rows without one last. A row's
    benchmarks run at the placement of its machine (``machines``: key -> asv machine name, None for any). A pending
    trade-off comes first, with the rows of ``every`` (all the evaluation's rows) whose speedup would prove it."""
    from gate.runner import rounds

    baseline = str(policy.get("baseline", "handwritten"))
    chosen: dict = {}
    spent = 0.0

    def evidence(row) -> tuple[bool, bool, float]:
        # a pending trade-off first (its rounds include the speedup that would prove it), then by p-value
        p = getattr(row, "p_value", None)
        return getattr(row, "signal", None) != Signal.TRADEOFF, p is None, 1.0 if p is None else p

    for row in sorted(rows, key=evidence):
        asked = [
            p
            for r in [*rounds.tradeoff_siblings(row, list(every), int(policy.get("max_rounds", 0))), row]
            for p in rounds.benches_for(r, baseline)
        ]
        wanted = {
            key: {p: s for p, s in found.items() if p in asked}
            for key, found in steps.items()
            if machines.get(key) is None or machines[key] == row.machine
        }
        new = {
            key: {p: s for p, s in found.items() if p not in chosen.get(key, {})}
            for key, found in wanted.items()
        }
        cost = sum(
            sum(found.values()) + (15.0 if found and key not in chosen else 0.0) for key, found in new.items()
        )
        if not any(new.values()) or spent + cost > left_s:
            continue
        spent += cost
        for key, found in new.items():
            if found:
                chosen.setdefault(key, {}).update(found)
    return chosen


def gate_measured(args: argparse.Namespace):
    """``fusegate gate --measure``: the quick profile on base and head where the store has no results of them
    (the base in its own tree, the head's subject with the base's meter), the verdict, then more rounds on both
    for undecided cells. A head whose subject is the base's is not measured: the base's results judge it.
    Running the same command again goes on where it stopped."""
    from gate import lineage as lineages
    from gate.meter import cost
    from gate.store import db, queries

    started = time.monotonic()
    repo = repo_path()
    console = output.console(stderr=True)
    base, head = judged_pair(repo, args.base, args.head, console.print)
    machine = asv_machine(console.print)
    url = store_url(args)
    results = Path(args.results)
    lineage = lineages.of(repo, base, head) if base != head else None
    if lineage is not None and lineage.same_subject:
        console.print(
            f"  head {head[:12]}'s subject is base {base[:12]}'s (kernels/ and the dependency pins, "
            f"{lineage.head['subject']}): the base's results judge it, nothing is measured for the head"
        )
        sides = {"base": side_of(repo, "base", base, results)}
    else:
        sides = {"head": side_of(repo, "head", head, results, meter=base, say=say_plainly(console))}
        if base != head:
            base_side = side_of(repo, "base", base, results)
            sides = {"base": base_side, "head": replace(sides["head"], against=base_side)}
    if lineage is not None and lineage.meter_changes:
        console.print(
            f"  head changes the meter ({', '.join(lineage.meter_changes[:4])}"
            f"{' ...' if len(lineage.meter_changes) > 4 else ''}): it is measured with the base's"
        )
    where = placements.here(machine, console.print)
    here = {at.machine for at in where}  # a commit's runs on other machines do not time it on this one
    with db.transaction(url) as session:
        measured = {}
        for name, side in sides.items():
            found_here = queries.provenances(session, commit_sha=side.sha).items()
            runs = [p for (m, _), found in found_here if m in here or None in here for p in found]
            # the head's results count only when the base's meter took them (or, unrecorded, when it is the head's)
            meter = lineage.base["meter"] if lineage is not None else None
            measured[name] = bool(runs) and (meter is None or any(r.get("meter") == meter for r in runs))
    if not all(measured.values()):
        cost.ensure_valgrind(install=True, say=console.print)
    for name, side in sides.items():
        if measured[name]:
            console.print(f"  {name} {side.sha[:12]} has results in {url}: only undecided cells get rounds")
        else:
            measure(side, args.rounds, where, repo, console, profile_time=args.profile_time)
    judge = Judge(url, repo, base, head, list(sides.values()), console, fallback=False)
    evaluation = judge(extra_impls=args.impl)
    again = " ".join(
        ["fusegate", "gate", "--base", args.base, "--head", args.head, "--measure"]
        + (["--db", args.db] if args.db else [])
    )
    evaluation = more_rounds(
        judge, evaluation, where, started + args.max_minutes * 60, sides, repo, console, again=again
    )
    console.print(f"  {time.monotonic() - started:.0f} s in all")
    return evaluation
