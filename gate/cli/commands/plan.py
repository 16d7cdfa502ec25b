"""``fusegate plan``: what a profile measures on this machine (or another one's topology), and how long it takes.

Placements, thread counts and scales from the machine's NUMA nodes, cores and SMT siblings
(``gate.meter.plan``); the estimate is this machine's seconds per cell of each suite (its newest asv results, else
the development machine's) times the plan's cells, for a head (with its lockstep pass against the base) and for a
base.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from rich.table import Table

from gate.cli import output

NAME = ("plan",)
HELP = "the cells, placements and thread counts a profile measures on a machine, and the estimated time"


def arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--topology",
        type=Path,
        metavar="PATH",
        help="another machine: a sysfs devices/system directory (or a copy of one), or its JSON; default this one",
    )
    p.add_argument(
        "--fake",
        metavar="SxCxT/N",
        help="a machine of S sockets x C cores x T threads per core on N NUMA nodes, e.g. 2x40x2/2",
    )
    p.add_argument("--profile", choices=("quick", "full"), default="quick")
    p.add_argument(
        "--best",
        metavar="LABEL=T[,LABEL=T]",
        help="best known thread count per placement (fusegate threads prints it), e.g. node0=24,interleaved=48",
    )
    p.add_argument("--json", action="store_true")


def _best(text: str | None) -> dict[str, int]:
    out = {}
    for item in (text or "").split(","):
        if item:
            label, _, value = item.partition("=")
            if not value.isdigit() or int(value) < 1:
                raise ValueError(f"--best {item!r}: expected LABEL=THREADS with a positive count")
            out["" if label == "whole" else label] = int(value)
    return out


def _fake(text: str):
    import re
    import tempfile

    from gate.meter import topology

    m = re.fullmatch(r"(\d+)x(\d+)x(\d+)/(\d+)", text)
    if not m or not all(int(g) > 0 for g in m.groups()):
        raise ValueError(
            f"--fake {text!r}: expected SOCKETSxCORESxTHREADS/NODES with positive counts, e.g. 2x40x2/2"
        )
    sockets, cores, smt, nodes = map(int, m.groups())
    with tempfile.TemporaryDirectory(prefix="fusegate-topology-") as tmp:
        return topology.read(
            topology.write_fake(Path(tmp), sockets=sockets, cores_per_socket=cores, smt=smt, nodes=nodes)
        )


def run(args: argparse.Namespace) -> int:
    from gate.meter import plan, topology

    t = _fake(args.fake) if args.fake else topology.load(args.topology) if args.topology else topology.read()
    head = plan.make(t, args.profile, best=_best(args.best))
    base = plan.make(t, args.profile, best=_best(args.best), head=False)
    if args.json:
        print(
            json.dumps(
                {
                    "topology": t.describe(),
                    "profile": args.profile,
                    "placements": head.rows(),
                    "cells": head.cells,
                    "head_s": head.estimated_s,
                    "base_s": base.estimated_s,
                },
                indent=2,
            )
        )
        return 0
    table = Table(title=f"{args.profile} profile on {t.describe()}")
    for col in ("placement", "CPUs", "memory", "threads", "scales"):
        table.add_column(col)
    for row in head.rows():
        table.add_row(
            row["placement"],
            row["cpus"],
            row["mem"],
            ",".join(map(str, row["threads"])),
            ",".join(map(str, row["scales"])),
        )
    out = output.console()
    out.print(table)
    out.print("cells per commit: " + ", ".join(f"{suite} {n}" for suite, n in head.cells.items()))
    out.print(
        f"estimated: {head.estimated_s / 60:.1f} min per head (with its lockstep pass), "
        f"{base.estimated_s / 60:.1f} min per base"
    )
    return 0
