"""``python -m tools changepoints-bench``: change-point methods scored on injected steps in this machine's A/A noise."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from rich.table import Table

from gate import git
from gate.cli import output
from gate.cli.options import (
    DEFAULT_RESULTS,
    factors,
    repo_path,
)

NAME = ("changepoints-bench",)
HELP = "score change-point methods on injected steps in an A/A pair's noise from this machine"


def arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--results", default=DEFAULT_RESULTS, metavar="DIR", help="asv results with the A/A pair")
    p.add_argument("--base", required=True, help="one commit of the A/A pair")
    p.add_argument("--head", required=True, help="the other commit (the same tree)")
    p.add_argument("--series", type=int, default=150, help="simulated histories per step size")
    p.add_argument("--length", type=int, default=60, help="commits per history")
    p.add_argument(
        "--penalties",
        type=factors,
        default=[],
        metavar="K,K",
        help="also score the chosen solver at these penalties (x sigma x log n), e.g. 1,4",
    )
    p.add_argument("--json", action="store_true")


def run(args: argparse.Namespace) -> int:
    """Score the change-point methods on injected steps in this machine's A/A noise."""
    from tools import changepoints_bench as changepoints

    repo = repo_path()
    base, head = git.resolve(repo, args.base), git.resolve(repo, args.head)
    if not git.same_tree(repo, base, head):
        raise ValueError(f"{args.base} and {args.head} are not the same tree: an A/A pair needs two")
    noise = changepoints.aa_noise(Path(args.results), base, head)
    methods = changepoints.with_penalties(args.penalties)
    rows = changepoints.compare_methods(noise, series=args.series, length=args.length, methods=methods)
    facts = {
        "base": base,
        "head": head,
        "cells": len(noise),
        "noise_sd": float(noise.std()),
        "series": args.series,
        "length": args.length,
    }
    if args.json:
        print(json.dumps({**facts, "rows": rows}, indent=2))
    else:
        output.console().print(changepoints_table(rows, facts))
    return 0


def changepoints_table(rows: list[dict], facts: dict) -> Table:
    table = Table(
        title="change points: injected steps in this machine's A/A noise",
        caption=f"A/A {facts['base'][:12]} / {facts['head'][:12]}: {facts['cells']} cells, noise sd "
        f"{facts['noise_sd']:.1%}; {facts['series']} histories of {facts['length']} commits per step size "
        "(a third each with 0, 1, 2 steps); found = within 1 commit",
    )
    for col in ("method", "step", "recall", "precision", "false / 100 commits", "ms / history"):
        table.add_column(col, justify="left" if col == "method" else "right")
    for r in rows:
        table.add_row(
            r["method"],
            f"{r['step']:.0%}",
            f"{r['recall']:.2f}",
            output.num(r["precision"], ".2f"),
            f"{r['false_per_100']:.1f}",
            f"{r['ms_per_series']:.1f}",
        )
    return table
