"""``fusegate run``, the main job: quick asv suites on HEAD, the store, the verdict, more rounds where undecided, the service."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import threading
import time
import webbrowser
from pathlib import Path

from gate import git
from gate.cli import output, placements
from gate.cli.commands import serve
from gate.cli.measure import LocalMeter, asv_machine
from gate.cli.options import (
    DEFAULT_RESULTS,
    db_option,
    minutes,
    repo_path,
    rows_option,
    store_url,
)
from gate.runner.gating import more_rounds
from gate.runner.judge import Judge
from gate.runner.sides import Side

NAME = ("run",)
HELP = "the main job: quick benchmarks of HEAD -> the store -> the verdict -> the service on localhost"


def arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--base", default="main", help="compare against this commit if it has results (default main)"
    )
    p.add_argument("--results", default=DEFAULT_RESULTS, metavar="DIR", help="asv results_dir")
    p.add_argument(
        "--rounds",
        type=int,
        default=None,
        help="benchmark processes per timed cell at first (asv -a rounds=N; default: each suite's own, "
        "HotSlice 6 short ones, the paired suites 3)",
    )
    p.add_argument(
        "--max-minutes",
        type=minutes,
        default=10.0,
        help="add rounds to undecided cells only while the whole run stays within this (default 10)",
    )
    p.add_argument(
        "--continue",
        dest="resume",
        action="store_true",
        help="skip the profile: add rounds to HEAD's undecided cells (what an inconclusive run prints)",
    )
    p.add_argument(
        "--no-bench", action="store_true", help="skip the benchmarks: ingest and judge what is there"
    )
    p.add_argument(
        "--profile-time",
        action="store_true",
        help="print where the benchmarks' time went, per benchmark class",
    )
    p.add_argument("--no-serve", action="store_true", help="exit with the verdict's code instead of serving")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000)
    rows_option(p)
    db_option(p)


def run(args: argparse.Namespace) -> int:
    """The main job: quick asv suites on HEAD -> the store -> the verdict -> more rounds where undecided ->
    the service on localhost."""
    from gate.domain.vocabulary import EXIT_CODES, Verdict

    started = time.monotonic()
    repo = repo_path()
    head = git.resolve(repo, "HEAD")
    base = git.resolve(repo, args.base) if args.base else head
    console = output.console(stderr=True)
    if subprocess.run(["git", "-C", str(repo), "diff", "--quiet", "HEAD"], check=False).returncode:
        console.print(
            f"[yellow]the working tree differs from HEAD; its results are recorded as {head[:12]}[/]"
        )
    machine = asv_machine(console.print)
    url = store_url(args)
    side = Side("head", head, repo, Path(args.results))
    where = placements.here(machine, console.print)
    meter = LocalMeter(repo, console, where, rounds=args.rounds, profile_time=args.profile_time)
    if not (args.no_bench or args.resume):
        meter.prepare()
        meter.measure(side)
    console.print(f"[bold]results[/] into {url}")
    judge = Judge(url, repo, base, head, [side], console, fallback=True)
    evaluation = judge()
    if not args.no_bench:
        evaluation = more_rounds(
            judge,
            evaluation,
            where,
            started + args.max_minutes * 60,
            {"head": side},
            console,
            meter=meter,
            again=_continue_command(args),
        )
    output.print_verdict(evaluation, rows=args.rows)
    console.print(f"  {time.monotonic() - started:.0f} s in all")
    if not args.no_serve:
        site = f"http://{args.host}:{args.port}"
        machines = judge.machines
        dashboard = f"{site}/machines/{machines[0]}" if machines else f"{site}/machines"
        console.print(
            f"[bold]serving[/]: verdict {evaluation.verdict}; the dashboard: {dashboard} "
            f"(this verdict: {site}/pr/{judge.base}/{head}; the API: {site}/docs)",
            soft_wrap=True,
        )
        if os.environ.get("DISPLAY") or sys.platform == "darwin":  # a desktop: open it in the browser too
            threading.Timer(2.0, webbrowser.open, args=(dashboard,)).start()
        serve.run(args)
    return EXIT_CODES[Verdict(evaluation.verdict)]


def _continue_command(args: argparse.Namespace) -> str:
    words = ["fusegate", "run", "--continue"]
    if args.base != "main":
        words += ["--base", args.base]
    if args.results != DEFAULT_RESULTS:
        words += ["--results", args.results]
    if args.db:
        words += ["--db", args.db]
    if args.max_minutes != 10.0:
        words += ["--max-minutes", f"{args.max_minutes:g}"]
    if args.no_serve:
        words.append("--no-serve")
    return " ".join(words)
