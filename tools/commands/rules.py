"""``python -m tools rules``: asv's rule and the gate's on the same stored samples, with slowdowns injected."""

from __future__ import annotations

import argparse
import json

from rich.table import Table

from gate.cli import output
from gate.cli.options import (
    commits_of,
    db_option,
    factors,
)

NAME = ("rules",)
HELP = "asv's rule vs the gate's on stored samples, with injected slowdowns"


def arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--base", required=True)
    p.add_argument("--head", required=True)
    p.add_argument(
        "--inject",
        type=factors,
        default=[1.0, 1.05, 1.1, 1.2],
        metavar="F[,F...]",
        help="slowdown factors applied to the head's samples (default 1,1.05,1.1,1.2)",
    )
    p.add_argument("--json", action="store_true")
    db_option(p)


def run(args: argparse.Namespace) -> int:
    """asv's rule vs the gate's on the same stored samples, with slowdowns injected into the head."""
    from gate import policy
    from gate.store import db
    from tools import rules

    url, repo, base, head = commits_of(args)
    pol, _ = policy.read_from_base(repo, base)
    with db.transaction(url, write=False) as session:
        rows = rules.compare(session, base_sha=base, head_sha=head, policy=pol, injections=args.inject)
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        output.console().print(rules_table(rows, base, head))
    return 0


def rules_table(rows: list[dict], base: str, head: str) -> Table:
    table = Table(
        title=f"asv's rule vs the gate's: timing cells of {base[:12]} -> {head[:12]}, head slowed by a factor"
    )
    cols = (
        "injected",
        "cells",
        "asv: worse",
        "gate: fail",
        "gate: pass",
        "gate: inconclusive",
        "cost cells",
        "asv: cost worse",
        "gate: cost fail",
    )
    for col in cols:
        table.add_column(col, justify="right")
    for r in rows:
        table.add_row(
            f"x{r['injected']:g}",
            *(str(r[k]) for k in ("cells", "asv_worse", "gate_fail", "gate_pass", "gate_inconclusive")),
            *(str(r[k]) for k in ("cost_cells", "asv_cost_worse", "gate_cost_fail")),
        )
    return table
