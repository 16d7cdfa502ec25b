"""``fusegate kernels cost``: instructions and simulated cache misses per call under callgrind."""

from __future__ import annotations

import argparse
import json

from rich.table import Table

from gate.cli import output
from gate.cli.options import (
    listed,
    positive_int,
    task_impl_options,
)

NAME = ("kernels", "cost")
HELP = "instructions and simulated cache misses per call under callgrind (the cost signal)"


def arguments(p: argparse.ArgumentParser) -> None:
    task_impl_options(p)
    p.add_argument("--num-envs", type=listed(positive_int), default=[4096, 32768], metavar="N[,N...]")
    p.add_argument(
        "--collector-envs",
        type=listed(positive_int),
        default=[],
        metavar="N[,N...]",
        help="also one collector step of N envs, without MuJoCo's physics (the gate's quick grid: 64)",
    )
    p.add_argument("--calls", type=positive_int, default=3, help="measured calls per fused cell (default 3)")
    p.add_argument(
        "--jobs",
        type=positive_int,
        default=None,
        help="kernels measured at a time, each in its own forked process (default: CPUs)",
    )
    p.add_argument(
        "--processes", type=positive_int, default=1, help="measure N times in fresh processes and compare"
    )
    p.add_argument("--install", action="store_true", help="apt-get install valgrind when it is missing")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")


def run(args: argparse.Namespace) -> int:
    """Per-call cost of each cell under callgrind, in ``--processes`` fresh measurements; their differences."""
    from gate.meter import cost
    from kernels import registry

    cells = [
        cost.Cell(task=t, impl=i, num_envs=n, kind=kind)
        for t in args.task
        for i in args.impl
        if i in registry.available(t)
        for kind, scales in ((cost.UPDATE_STATE, args.num_envs), (cost.COLLECTOR, args.collector_envs))
        for n in scales
    ]
    cost.ensure_valgrind(
        install=args.install, say=output.console(stderr=True).print
    )  # CostError: a ValueError
    runs = []
    with output.progress(output.console(stderr=True)) as progress:
        job = progress.add_task("callgrind", total=args.processes)
        for k in range(args.processes):
            progress.update(
                job, description=f"callgrind: {len(cells)} cells, measurement {k + 1}/{args.processes}"
            )
            runs.append(cost.measure(cells, calls=args.calls, jobs=args.jobs))
            progress.advance(job)
    if args.json:
        print(json.dumps({"runs": runs}, indent=2))
    else:
        output.console().print(cost_table(runs))
    return 0 if all(not c["error"] for run in runs for c in run["cells"]) else 1


def cost_table(runs: list[dict]) -> Table:
    """``fusegate kernels cost``: per-call cost of each cell, and how far fresh measurements of it differ."""
    first = runs[0]
    seconds = ", ".join(f"{r['seconds']['fill'] + r['seconds']['valgrind']:.0f} s" for r in runs)
    table = Table(
        title=f"cost per call under callgrind {first['valgrind']} (Numba target {first['target']}, "
        f"{first['processes']} kernels in forked processes, {first['jobs']} at a time; {len(runs)} measurement(s): {seconds})",
        caption="per: an update_state call, or a collector step without physics; estimated cycles = L1 hits + "
        "5 x LL hits + 35 x RAM; spread: (max - min) / mean of the calls (calls differ in work: state evolves); "
        "differ: largest difference between the measurements",
    )
    for col in (
        "task",
        "impl",
        "per",
        "N",
        "calls",
        "instructions",
        "L1 misses",
        "LL misses",
        "est. cycles",
        "spread",
    ):
        table.add_column(col, justify="left" if col in ("task", "impl", "per") else "right")
    if len(runs) > 1:
        table.add_column("differ (instr / cycles)", justify="right")
    for i, c in enumerate(first["cells"]):
        per = "step" if c.get("kind") == "collector" else "call"
        if c["error"]:
            table.add_row(
                c["task"], c["impl"], per, str(c["num_envs"]), "-", f"[red]{c['error']}[/]", *["-"] * 4
            )
            continue
        row = [
            c["task"],
            c["impl"],
            per,
            str(c["num_envs"]),
            str(c["calls"]),
            f"{c['instructions']:,.0f}",
            f"{c['l1_misses']:,.0f}",
            f"{c['ll_misses']:,.0f}",
            f"{c['estimated_cycles']:,.0f}",
            f"{c['spread']:.2%}",
        ]
        if len(runs) > 1:
            others = [r["cells"][i] for r in runs[1:] if not r["cells"][i]["error"]]
            differ = [
                max((abs(o[m] / c[m] - 1) for o in others), default=float("nan"))
                for m in ("instructions", "estimated_cycles")
            ]
            row.append(f"{differ[0]:.4%} / {differ[1]:.3%}")
        table.add_row(*row)
    return table
