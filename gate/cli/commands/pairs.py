"""``fusegate pairs``: paired implementation/hand-written ratios from the asv sidecar."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from rich.table import Table

from gate.cli import output

NAME = ("pairs",)
HELP = "paired implementation/hand-written ratios from the asv sidecar"


def arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("directory", nargs="?", default=".asv/fusegate", help="default: .asv/fusegate")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")


def run(args: argparse.Namespace) -> int:
    """Median paired ratio per cell with its hierarchical-bootstrap 95% CI, from the asv sidecar."""
    from gate.runner import pairs

    directory = Path(args.directory)
    if not directory.is_dir():
        raise ValueError(
            f"no sidecar directory {directory}; run the asv suites first (asv run / asv continuous)"
        )
    rows = pairs.summarize(directory)
    if not rows:
        raise ValueError(f"{directory} holds no paired records (*/paired.jsonl)")
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        output.console().print(pairs_table(rows))
    return 0


def pairs_table(rows: list[dict]) -> Table:
    table = Table(
        title="Paired ratio impl / hand-written per cell: median of pairs, 95% hierarchical bootstrap CI"
    )
    columns = (
        "commit",
        "task",
        "impl",
        "N",
        "thr",
        "procs",
        "pairs",
        "ratio",
        "95% CI",
        "CI width % of ratio",
    )
    output.columns(table, columns, left=("commit", "task", "impl"))
    for r in rows:
        table.add_row(
            r["commit"][:8],
            r["task"],
            r["impl"],
            str(r["num_envs"]),
            str(r["threads"]),
            str(r["processes"]),
            str(r["pairs"]),
            f"{r['median_ratio']:.3f}",
            f"[{r['ci_low']:.3f}, {r['ci_high']:.3f}]",
            f"{r['ci_width_pct']:.1f}",
        )
    return table
