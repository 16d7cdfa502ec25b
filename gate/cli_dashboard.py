"""The dashboard's commands: dashboard bench (page times on a big store), changepoints bench. One function each."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from gate import git, render
from gate.cli_store import DEFAULT_RESULTS, _db_option, _factors, _repo, _url


def cmd_dashboard_bench(args: argparse.Namespace) -> int:
    """Fill a store to --results (bulk) if it holds fewer, then time every page and JSON endpoint."""
    from gate.dashboard import bench

    url = _url(args)
    console = render.console(stderr=True)
    rows, facts = bench.pages(
        url, repo=_repo(), results=args.results, repeats=args.repeats,
        progress=lambda n: console.print(f"  {n} results", end="\r"),
    )  # fmt: skip
    if args.json:
        print(json.dumps({**facts, "pages": rows}, indent=2))
    else:
        render.console().print(render.dashboard_bench_table(rows, facts))
    return 0


def cmd_changepoints_bench(args: argparse.Namespace) -> int:
    """Score the change-point methods on injected steps in this machine's A/A noise."""
    from gate.dashboard import changepoints

    repo = _repo()
    base, head = git.resolve(repo, args.base), git.resolve(repo, args.head)
    if not git.same_tree(repo, base, head):
        raise ValueError(f"{args.base} and {args.head} are not the same tree: an A/A pair needs two")
    noise = changepoints.aa_noise(Path(args.results), base, head)
    methods = changepoints.with_penalties(args.penalties)
    rows = changepoints.compare_methods(noise, series=args.series, length=args.length, methods=methods)
    facts = {"base": base, "head": head, "cells": len(noise), "noise_sd": float(noise.std()),
             "series": args.series, "length": args.length}  # fmt: skip
    if args.json:
        print(json.dumps({**facts, "rows": rows}, indent=2))
    else:
        render.console().print(render.changepoints_table(rows, facts))
    return 0


def add_commands(commands) -> None:
    dash = commands.add_parser("dashboard", help="the web dashboard")
    dash_commands = dash.add_subparsers(dest="dashboard_command", required=True)
    db_bench = dash_commands.add_parser(
        "bench", help="fill a store (bulk) to --results and time the server side of every page and endpoint"
    )
    db_bench.add_argument("--results", type=int, default=1_000_000, help="results in the store (default 1M)")
    db_bench.add_argument("--repeats", type=int, default=30)
    db_bench.add_argument("--json", action="store_true")
    _db_option(db_bench)
    db_bench.set_defaults(func=cmd_dashboard_bench)

    cp = commands.add_parser("changepoints", help="change-point detection for the dashboard's histories")
    cp_commands = cp.add_subparsers(dest="changepoints_command", required=True)
    cp_bench = cp_commands.add_parser(
        "bench", help="score change-point methods on injected steps in an A/A pair's noise from this machine"
    )
    cp_bench.add_argument(
        "--results", default=DEFAULT_RESULTS, metavar="DIR", help="asv results with the A/A pair"
    )
    cp_bench.add_argument("--base", required=True, help="one commit of the A/A pair")
    cp_bench.add_argument("--head", required=True, help="the other commit (the same tree)")
    cp_bench.add_argument("--series", type=int, default=150, help="simulated histories per step size")
    cp_bench.add_argument("--length", type=int, default=60, help="commits per history")
    cp_bench.add_argument(
        "--penalties", type=_factors, default=[], metavar="K,K",
        help="also score the chosen solver at these penalties (x sigma x log n), e.g. 1,4",
    )  # fmt: skip
    cp_bench.add_argument("--json", action="store_true")
    cp_bench.set_defaults(func=cmd_changepoints_bench)
