"""``fusegate run`` (the main job) and ``fusegate profile-time``: asv on HEAD with progress, the verdict, more
rounds for the cells still undecided, the service."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
import webbrowser
from pathlib import Path

from gate import render
from gate.cli_store import DEFAULT_RESULTS, _db_option, _repo, _url, cmd_serve, ingest_dir

ROUNDS_STEP = 2  # processes added per undecided cell and pass


def _asv_machine(say) -> str | None:
    """This machine's asv name; registers it with asv's defaults first, without asv's questionnaire."""
    path = Path.home() / ".asv-machine.json"
    registered = not path.exists()
    if registered:
        done = subprocess.run(
            [sys.executable, "-m", "asv", "machine", "--yes"], capture_output=True, text=True, check=False
        )
        if done.returncode:
            raise ValueError(f"asv machine --yes failed: {(done.stderr or done.stdout).strip()[-500:]}")
    try:
        names = [k for k in json.loads(path.read_text()) if k != "version"]
    except (OSError, ValueError):
        return None
    if names and registered:
        say(f"registered this machine with asv as {names[0]!r} ({path}; asv machine --machine NAME renames)")
    return names[0] if names else None


def _asv_env(head: str) -> dict:
    return {
        **os.environ,
        "ASV_COMMIT": head,
        "FUSEGATE_BENCH_PROFILE": os.environ.get("FUSEGATE_BENCH_PROFILE", "quick"),
    }


def _asv_calls(calls: list, *, head: str, log: Path, console) -> float:
    """Run asv on HEAD (this interpreter's environment) once per (extra arguments, ``asvrun.Call``) with a
    progress line; returns the wall seconds."""
    from gate import asvrun

    run = (sys.executable, "-m", "asv", "run", "-E", f"existing:{sys.executable}", "--set-commit-hash", head,
           "--record-samples")  # fmt: skip
    estimate = asvrun.Estimate([plan for _, plan in calls])
    t0 = time.monotonic()
    with console.status("starting asv") as status:
        for i, (extra, _) in enumerate(calls):
            if i:
                estimate.next_call()
            code = asvrun.run(
                (*run, *extra),
                env=_asv_env(head),
                log=log,
                estimate=estimate,
                say=lambda line: console.print(f"  {line}", highlight=False),
                status=status.update,
            )
            if code not in (0, 2):  # 2: a benchmark failed; the gate reports it as a correctness failure
                raise ValueError(f"asv run exited with {code}; its output: {log}")
    return time.monotonic() - t0


def _profile_calls(rounds: int, results: Path, machine: str | None) -> list:
    from gate import asvrun
    from gate.ingest import bundle

    return [
        (extra, asvrun.plan(extra[1], int(extra[-1].split("=")[1]) if "-a" in extra else 1, results, machine))
        for extra in bundle.gate_asv_runs(rounds)
    ]


def _time_profile(results: Path, commit: str, *, since=None, total_s=None) -> list:
    from gate import timeprofile

    return timeprofile.profile(results, results.parent / "fusegate", commit, since=since, total_s=total_s)


def _per_process(results: Path, head: str) -> dict[str, float]:
    """Seconds per benchmark process of each timed class in HEAD's results (for the next pass's estimate)."""
    return {
        r.name: (r.wall_s / r.processes)
        for r in _time_profile(results, head)
        if r.processes and not r.name.startswith("(")
    }


class _Judge:
    """Ingest ``results`` and evaluate (base, head) again, as often as rounds are added."""

    def __init__(self, args: argparse.Namespace, repo: Path, head: str, url: str, console):
        from gate import policy

        self.args, self.repo, self.head, self.url, self.console = args, repo, head, url, console
        self.base = policy.resolve(repo, args.base) if args.base else head
        self.policy_sha = self.base  # the policy always comes from the requested base, even without results
        self.machines: list[str] = []

    def __call__(self, *, quiet: bool = False):
        from gate.api.schemas import EvaluationOut
        from gate.evaluate import evaluate_and_store
        from gate.store import db, queries

        self.machines = []
        for machine, report in ingest_dir(self.url, Path(self.args.results)):
            if not quiet:
                self.console.print(
                    f"  {machine}: {report.stored} run(s) stored, {report.unchanged} unchanged"
                )
            self.machines.append(machine)
        with db.transaction(self.url) as session:
            if self.base != self.head and not queries.summaries(session, commit_sha=self.base):
                if not quiet:
                    self.console.print(
                        f"  base {self.args.base} ({self.base[:12]}) has no results yet: judging HEAD's kernels only"
                    )
                self.base = self.head
            return EvaluationOut.model_validate(
                evaluate_and_store(
                    session,
                    repo=self.repo,
                    base_sha=self.base,
                    head_sha=self.head,
                    policy_sha=self.policy_sha,
                )
            )


def _continue_command(args: argparse.Namespace) -> str:
    words = ["fusegate", "run", "--continue"]
    if args.base != "main":
        words += ["--base", args.base]
    if args.results != DEFAULT_RESULTS:
        words += ["--results", args.results]
    if args.db:
        words += ["--db", args.db]
    if args.no_serve:
        words.append("--no-serve")
    return " ".join(words)


def _more_rounds(args, judge: _Judge, evaluation, machine: str | None, deadline: float, console):
    """Add ``ROUNDS_STEP`` processes to the benchmarks behind every undecided cell the budget allows, until
    the verdict is decided, the budget is spent or ``deadline`` (monotonic) would pass; then say how to go on."""
    from gate import asvrun, rounds

    results = Path(args.results)
    while evaluation.verdict == "inconclusive":
        patterns = rounds.open_benches(evaluation.comparisons, evaluation.policy, machine)
        open_rows = [c for c in evaluation.comparisons if c.decision == "inconclusive"]
        if not patterns:
            console.print(f"  {len(open_rows)} cell(s) undecided with the policy's budget of rounds spent")
            return evaluation
        per = _per_process(results, judge.head)
        steps = {}
        for p in patterns:
            name = p.split("\\(")[0].lstrip("^").replace("\\", "")
            steps[p] = ROUNDS_STEP * per.get(".".join(name.split(".")[:2]), 10.0)
        expected = sum(steps.values()) + 15.0  # and asv's start and the parity check of the commit
        if time.monotonic() + expected > deadline:
            console.print(
                f"  {len(open_rows)} cell(s) undecided; another {ROUNDS_STEP} processes each would take about "
                f"{expected / 60:.1f} min, past --max-minutes. To add them: [bold]{_continue_command(args)}[/]",
                soft_wrap=True,
            )
            return evaluation
        console.print(
            f"[bold]more rounds[/]: {len(open_rows)} undecided cell(s), {ROUNDS_STEP} more processes for each of "
            f"{len(patterns)} benchmark selection(s), about {expected / 60:.1f} min"
        )
        extra = ("--append-samples", "-a", f"rounds={ROUNDS_STEP}", *rounds.bench_args(patterns))
        _asv_calls(
            [(extra, asvrun.Call(steps, ROUNDS_STEP))],
            head=judge.head,
            log=_log(judge.head),
            console=console,
        )
        evaluation = judge(quiet=True)
        counts = {
            d: sum(c.decision == d for c in evaluation.comparisons) for d in ("pass", "fail", "inconclusive")
        }
        console.print(f"  now {evaluation.verdict}: " + ", ".join(f"{n} {d}" for d, n in counts.items()))
    return evaluation


def _log(head: str) -> Path:
    return Path(".fusegate") / "logs" / f"asv-{head[:12]}.log"


def cmd_run(args: argparse.Namespace) -> int:
    """The main job: quick asv suites on HEAD -> the store -> the verdict -> more rounds where undecided ->
    the service on localhost."""
    from gate import policy
    from gate.evaluate import EXIT_CODES, Verdict

    started = time.monotonic()
    deadline = started + args.max_minutes * 60
    repo = _repo()
    head = policy.resolve(repo, "HEAD")
    console = render.console(stderr=True)
    if subprocess.run(["git", "-C", str(repo), "diff", "--quiet", "HEAD"], check=False).returncode:
        console.print(
            f"[yellow]the working tree differs from HEAD; its results are recorded as {head[:12]}[/]"
        )
    machine = _asv_machine(console.print)
    url = _url(args)
    results = Path(args.results)
    if not (args.no_bench or args.resume):
        from kernels import cost

        cost.ensure_valgrind(install=True, say=console.print)
        console.print(
            f"[bold]1/3[/] asv quick profile on HEAD {head[:12]} (hot slice timings, paired ratios, collector, "
            f"cost); asv's output: {_log(head)}"
        )
        since = time.time()
        wall = _asv_calls(
            _profile_calls(args.rounds, results, machine), head=head, log=_log(head), console=console
        )
        rows = _time_profile(results, head, since=since, total_s=wall)
        if args.profile_time:
            console.print(render.time_profile_table(rows, f"Where the {wall:.0f} s of asv went (seconds)"))
        else:
            top = ", ".join(f"{r.name} {r.wall_s:.0f} s" for r in rows[:3])
            console.print(f"  asv took {wall:.0f} s; most: {top} (--profile-time: all of it)")
    console.print(f"[bold]2/3[/] results into {url}")
    judge = _Judge(args, repo, head, url, console)
    evaluation = judge()
    if not args.no_bench:
        evaluation = _more_rounds(args, judge, evaluation, machine, deadline, console)
    out = render.console()
    out.print(render.verdict_table(evaluation))
    for line in render.verdict_lines(evaluation):
        out.print(line)
    console.print(f"  {time.monotonic() - started:.0f} s in all")
    if not args.no_serve:
        site = f"http://{args.host}:{args.port}"
        machines = judge.machines
        dashboard = f"{site}/machines/{machines[0]}" if machines else f"{site}/machines"
        console.print(
            f"[bold]3/3[/] verdict {evaluation.verdict}; the dashboard: {dashboard} "
            f"(this verdict: {site}/pr/{judge.base}/{head}; the API: {site}/docs)",
            soft_wrap=True,
        )
        if os.environ.get("DISPLAY") or sys.platform == "darwin":  # a desktop: open it in the browser too
            threading.Timer(2.0, webbrowser.open, args=(dashboard,)).start()
        cmd_serve(args)
    return EXIT_CODES[Verdict(evaluation.verdict)]


def cmd_profile_time(args: argparse.Namespace) -> int:
    from gate import policy

    commit = policy.resolve(_repo(), args.commit)
    rows = _time_profile(Path(args.results), commit)
    if not rows:
        raise ValueError(
            f"no asv results of {commit[:12]} under {args.results}: benchmark it first "
            "(fusegate run, asv run, asv continuous)"
        )
    if args.json:
        print(json.dumps([r.to_dict() for r in rows], indent=2))
    else:
        title = f"Where the benchmarks of {commit[:12]} spent their time (seconds; asv results and sidecar)"
        render.console().print(render.time_profile_table(rows, title))
    return 0


def _minutes(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected a positive number of minutes, got {text!r}")
    return value


def add_commands(commands) -> None:
    run = commands.add_parser(
        "run",
        help="the main job: quick benchmarks of HEAD -> the store -> the verdict -> the service on localhost",
    )
    run.add_argument(
        "--base", default="main", help="compare against this commit if it has results (default main)"
    )
    run.add_argument("--results", default=DEFAULT_RESULTS, metavar="DIR", help="asv results_dir")
    run.add_argument(
        "--rounds",
        type=int,
        default=3,
        help="benchmark processes per cell at first (asv -a rounds=N; default 3)",
    )
    run.add_argument(
        "--max-minutes",
        type=_minutes,
        default=10.0,
        help="add rounds to undecided cells only while the whole run stays within this (default 10)",
    )
    run.add_argument(
        "--continue",
        dest="resume",
        action="store_true",
        help="skip the profile: add rounds to HEAD's undecided cells (what an inconclusive run prints)",
    )
    run.add_argument(
        "--no-bench", action="store_true", help="skip the benchmarks: ingest and judge what is there"
    )
    run.add_argument(
        "--profile-time",
        action="store_true",
        help="print where the benchmarks' time went (fusegate profile-time)",
    )
    run.add_argument(
        "--no-serve", action="store_true", help="exit with the verdict's code instead of serving"
    )
    run.add_argument("--host", default="127.0.0.1")
    run.add_argument("--port", type=int, default=8000)
    _db_option(run)
    run.set_defaults(func=cmd_run)

    pt = commands.add_parser(
        "profile-time", help="where an asv run's time went: per benchmark class, start-up to measuring"
    )
    pt.add_argument("--commit", default="HEAD", help="the measured commit (default HEAD)")
    pt.add_argument("--results", default=DEFAULT_RESULTS, metavar="DIR", help="asv results_dir")
    pt.add_argument("--json", action="store_true")
    pt.set_defaults(func=cmd_profile_time)
