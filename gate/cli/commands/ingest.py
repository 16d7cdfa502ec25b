"""``fusegate ingest``: asv results (and the sidecar) into the store, as an upload would arrive."""

from __future__ import annotations

import argparse
from pathlib import Path

from gate.cli import output
from gate.cli.options import (
    DEFAULT_RESULTS,
    db_option,
    repo_path,
    store_url,
)

NAME = ("ingest",)
HELP = "store asv results (and the fusegate sidecar) in the results store"


def arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "results", nargs="?", default=DEFAULT_RESULTS, help=f"asv results_dir (default {DEFAULT_RESULTS})"
    )
    p.add_argument(
        "--sidecar", metavar="DIR", help="fusegate sidecar directory (default: <results>/../fusegate)"
    )
    db_option(p)


def run(args: argparse.Namespace) -> int:
    from gate.services import results

    url = store_url(args)
    sidecar = Path(args.sidecar) if args.sidecar else None
    arrival = results.arrived_from_directory(
        url, repo=repo_path(), results=Path(args.results), sidecar=sidecar
    )
    for machine, report in arrival.reports.items():
        output.console().print(
            f"{machine}: {report.stored} run(s) stored, {report.unchanged} unchanged, {report.results} results"
        )
    for e in arrival.evaluations:
        output.console().print(f"evaluated again: {e.base_sha[:12]} -> {e.head_sha[:12]}: {e.verdict}")
    return 0
