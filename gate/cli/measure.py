"""How ``fusegate run``, ``measure`` and ``gate --measure`` measure here: asv on a commit in its own tree with a
progress line, the meter's quick profile at every placement (``LocalMeter``), for the use case below the command
line (``gate.runner.gating``: the verdict from what arrived, and more rounds for the cells still undecided)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from gate import provenance
from gate.cli import output
from gate.cli.placements import PlacementRun
from gate.domain.machines import host_of
from gate.domain.selection import gate_asv_runs, gate_bench_against
from gate.meter.profile import Profile
from gate.runner.sides import Side, time_profile

__all__ = ["LocalMeter", "Side", "asv_machine", "measure", "say_plainly", "time_profile"]


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
        names = [k for k in json.loads(path.read_text()) if k != "version" and host_of(k) == k]
    except (OSError, ValueError):
        return None
    if names and registered:
        say(f"registered this machine with asv as {names[0]!r} ({path}; asv machine --machine NAME renames)")
    return names[0] if names else None


def say_plainly(console):
    """A ``say`` for ``side_of``: lines printed as they are (a requirement's ``[extra]`` is no markup)."""
    return lambda line: console.print(line, markup=False, highlight=False, soft_wrap=True)


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
    runs = gate_asv_runs(rounds, paired_rounds=paired, collector=collector)
    runs += [("--bench", gate_bench_against(collector=collector))] if against else []
    once = (gate_asv_runs(collector=collector)[0][1], gate_bench_against(collector=collector))
    return [
        (
            (*extra, *where.asv_args()),
            asvrun.plan(extra[1], 1 if extra[1] in once else rounds or 3, results, where.machine),
            where.environment(),
        )
        for extra in runs
    ]


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


class LocalMeter:
    """The use case's ``Meter`` (``gate.runner.gating``) on this machine: asv with a progress line on
    ``console``, the quick profile in ``rounds`` processes per timed cell at every placement of ``where``."""

    def __init__(self, repo: Path, console, where: list[PlacementRun], *, rounds=None, profile_time=False):
        self.repo, self.console, self.where = repo, console, where
        self.rounds, self.profile_time = rounds, profile_time

    def prepare(self) -> None:
        from gate.meter import cost

        cost.ensure_valgrind(install=True, say=self.console.print)

    def measure(self, side: Side) -> None:
        measure(side, self.rounds, self.where, self.repo, self.console, profile_time=self.profile_time)

    def asv(self, calls: list, *, side: Side, env: dict | None = None) -> float:
        return _asv_calls(calls, side=side, repo=self.repo, console=self.console, env=env)
