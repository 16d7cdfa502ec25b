"""``fusegate calibrate``: each machine's noise floor from an A/A pair of commits."""

from __future__ import annotations

import argparse
import json

from gate import git
from gate.cli import output
from gate.cli.options import (
    DEFAULT_RESULTS,
    commits_of,
    db_option,
)

NAME = ("calibrate",)
HELP = "learn each machine's noise floor from an A/A pair of commits"


def arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--base", required=True, help="first commit of the A/A pair")
    p.add_argument("--head", required=True, help="second commit (same tree)")
    p.add_argument(
        "--results",
        default=DEFAULT_RESULTS,
        metavar="DIR",
        help="ingest this asv results_dir first if it exists",
    )
    p.add_argument("--force", action="store_true", help="calibrate even if the two trees differ")
    p.add_argument("--json", action="store_true")
    db_option(p)


def run(args: argparse.Namespace) -> int:
    from gate import policy
    from gate.services.calibration import calibrate
    from gate.store import db

    url, repo, base, head = commits_of(args)
    if not git.same_tree(repo, base, head) and not args.force:
        raise ValueError(
            f"{base[:12]} and {head[:12]} have different trees: an A/A calibration measures one build twice "
            "(commit an empty commit on top and measure both); --force skips this check"
        )
    pol, _ = policy.read_from_base(repo, base)
    with db.transaction(url) as session:
        floors = calibrate(session, base_sha=base, head_sha=head, cost_metric=pol.cost_metric)
    rows = [
        {
            "machine": m,
            "signal": "cost" if t == "cost" else "time",
            "threads": 1 if t == "cost" else t,
            **f.to_dict(),
        }
        for (m, t), f in floors.items()
    ]
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        for r in rows:
            what = f"cost ({pol.cost_metric})" if r["signal"] == "cost" else f"time threads={r['threads']}"
            output.console().print(
                f"{r['machine']} {what}: noise floor {r['noise_floor']:.2%}, "
                f"minimum detectable effect {r['mde']:.2%} ({r['cells']} A/A cells)"
            )
    return 0
