"""``python -m tools store-bench``: evaluation time of a 200-cell pull request on a big store."""

from __future__ import annotations

import argparse
import json

from rich.table import Table

from gate.cli import output
from gate.cli.options import (
    db_option,
    repo_path,
    store_url,
)

NAME = ("store-bench",)
HELP = "fill a store and time complete evaluations of a 200-cell PR on it"


def arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--results", type=int, default=100_000, help="results in the store (default 100000)")
    p.add_argument("--repeats", type=int, default=30, help="evaluations timed (default 30)")
    p.add_argument("--json", action="store_true")
    db_option(p)


def run(args: argparse.Namespace) -> int:
    """Fill a store to --results (if it holds fewer) and time complete evaluations of a 200-cell PR on it."""
    from gate.store import db, queries
    from tools import store_scale as scale

    url = store_url(args)
    with db.transaction(url) as session:
        have = queries.count_results(session)
    console = output.console(stderr=True)
    if have < args.results:
        if have:
            raise ValueError(
                f"{url} holds {have} results, fewer than --results {args.results}; use an empty store"
            )
        console.print(f"filling {url} with {args.results} results through the ingest path")
        commits = scale.fill(
            url, results=args.results, progress=lambda n: console.print(f"  {n} results", end="\r")
        )
    else:
        commits = scale.fill_commits(url)
    with db.transaction(url) as session:
        total = queries.count_results(session)
    row = scale.time_evaluations(
        url, repo=repo_path(), base=commits["base"], head=commits["head"], repeats=args.repeats
    )
    row = {"results_in_store": total, **row}
    if args.json:
        print(json.dumps(row, indent=2))
    else:
        output.console().print(store_bench_table(row, url))
    return 0


def store_bench_table(row: dict, url: str) -> Table:
    table = Table(title=f"Evaluation of one PR against a filled store ({url})")
    for col in ("results in store", "cells", "verdict", "repeats", "median ms", "p95 ms", "max ms"):
        table.add_column(col, justify="right")
    table.add_row(
        f"{row['results_in_store']:,}",
        str(row["cells"]),
        row["verdict"],
        str(row["repeats"]),
        f"{row['median_ms']:.1f}",
        f"{row['p95_ms']:.1f}",
        f"{row['max_ms']:.1f}",
    )
    return table
