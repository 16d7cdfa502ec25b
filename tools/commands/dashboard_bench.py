"""``python -m tools dashboard-bench``: server time of every page and JSON endpoint on a big store."""

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

NAME = ("dashboard-bench",)
HELP = "fill a store (bulk) to --results and time the server side of every page and endpoint"


def arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--results", type=int, default=1_000_000, help="results in the store (default 1M)")
    p.add_argument("--repeats", type=int, default=30)
    p.add_argument("--json", action="store_true")
    db_option(p)


def run(args: argparse.Namespace) -> int:
    """Fill a store to --results (bulk) if it holds fewer, then time every page and JSON endpoint."""
    from tools import dashboard_bench as bench

    url = store_url(args)
    console = output.console(stderr=True)
    rows, facts = bench.pages(
        url,
        repo=repo_path(),
        results=args.results,
        repeats=args.repeats,
        progress=lambda n: console.print(f"  {n} results", end="\r"),
    )
    if args.json:
        print(json.dumps({**facts, "pages": rows}, indent=2))
    else:
        output.console().print(dashboard_bench_table(rows, facts))
    return 0


def dashboard_bench_table(rows: list[dict], facts: dict) -> Table:
    table = Table(
        title=f"fusegate dashboard: server time per request, {facts['results_in_store']:,} results in the store",
        caption=f"{facts['repeats']} requests per page, round-robin; history shows {facts['history_points']} points",
    )
    for col in ("page", "median", "p95", "max", "bytes"):
        table.add_column(col, justify="left" if col == "page" else "right")
    for r in rows:
        table.add_row(
            r["page"],
            f"{r['median_ms']:.1f} ms",
            f"{r['p95_ms']:.1f} ms",
            f"{r['max_ms']:.1f} ms",
            f"{r['bytes']:,}",
        )
    return table
