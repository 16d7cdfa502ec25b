"""``python -m tools profile-time``: where an asv run's time went, per benchmark class."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from gate import git
from gate.cli import output
from gate.cli.options import (
    DEFAULT_RESULTS,
    repo_path,
)

NAME = ("profile-time",)
HELP = "where an asv run's time went: per benchmark class, start-up to measuring"


def arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--commit", default="HEAD", help="the measured commit (default HEAD)")
    p.add_argument("--results", default=DEFAULT_RESULTS, metavar="DIR", help="asv results_dir")
    p.add_argument("--json", action="store_true")


def run(args: argparse.Namespace) -> int:
    from gate.runner import timeprofile

    commit = git.resolve(repo_path(), args.commit)
    results = Path(args.results)
    rows = timeprofile.profile(results, results.parent / "fusegate", commit)
    if not rows:
        raise ValueError(
            f"no asv results of {commit[:12]} under {args.results}: benchmark it first "
            "(fusegate run, asv run, asv continuous)"
        )
    if args.json:
        print(json.dumps([r.to_dict() for r in rows], indent=2))
    else:
        title = f"Where the benchmarks of {commit[:12]} spent their time (seconds; asv results and sidecar)"
        output.console().print(output.time_profile_table(rows, title))
    return 0
