"""``fusegate kernels parity``: every implementation against the NumPy reference (spec E5)."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

from rich.table import Table

from gate.cli import output
from gate.domain.vocabulary import Status

if TYPE_CHECKING:
    from gate.meter.parity import ParityReport
from gate.cli.options import (
    listed,
    noise_level,
    positive_int,
    task_impl_options,
)

NAME = ("kernels", "parity")
HELP = "compare implementations against the NumPy reference"


def arguments(p: argparse.ArgumentParser) -> None:
    task_impl_options(p)
    p.add_argument("--num-envs", type=listed(positive_int), default=[1, 7, 1000, 4099], metavar="N[,N...]")
    p.add_argument("--seeds", type=listed(int), default=[0, 1, 2], metavar="S[,S...]")
    p.add_argument("--threads", type=listed(positive_int), default=[1, 2], metavar="T[,T...]")
    p.add_argument("--noise-level", type=listed(noise_level), default=[0.0, 1.0], metavar="L[,L...]")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")


def run(args: argparse.Namespace) -> int:
    import kernels
    from gate.meter import parity
    from kernels import registry

    impls = [i for i in args.impl if i != kernels.REFERENCE]
    reports = []
    cases = [
        (task, impl, n, seed, threads, noise)
        for task in args.task
        for impl in impls
        if impl in registry.available(task)
        for n in args.num_envs
        for seed in args.seeds
        for threads in args.threads
        for noise in args.noise_level
    ]
    with output.progress(output.console(stderr=True)) as progress:
        job = progress.add_task("parity", total=len(cases))
        for task, impl, n, seed, threads, noise in cases:
            progress.update(job, description=f"parity {task} {impl} N={n} seed={seed} threads={threads}")
            reports.append(
                parity.compare(
                    task=task, impl=impl, num_envs=n, seed=seed, threads=threads, noise_level=noise
                )
            )
            progress.advance(job)
    ok = all(r.ok for r in reports)
    if args.json:
        print(json.dumps({"ok": ok, "cases": [r.to_dict() for r in reports]}, indent=2))
    else:
        output.console().print(parity_table(reports))
        output.console().print(
            "[green]parity holds[/]" if ok else "[red]parity FAILED: outside spec E5 tolerance[/]"
        )
    return 0 if ok else 1


def parity_table(reports: list[ParityReport]) -> Table:
    table = Table(title="Parity against the NumPy reference (spec E5: atol 1e-5 + rtol 1e-4, done exact)")
    for col in (
        "task",
        "impl",
        "N",
        "seed",
        "threads",
        "noise",
        "worst array",
        "max abs",
        "max rel",
        "bad",
        Status.OK,
    ):
        table.add_column(col, justify="right" if col not in ("task", "impl", "worst array") else "left")
    for r in reports:
        worst = max(r.arrays, key=lambda a: (a.mismatches, a.max_abs))
        table.add_row(
            r.task,
            r.impl,
            str(r.num_envs),
            str(r.seed),
            str(r.threads),
            output.num(r.noise_level, "g"),
            f"{worst.name}",
            output.num(worst.max_abs, ".2e"),
            output.num(worst.max_rel, ".2e"),
            str(sum(a.mismatches for a in r.arrays)),
            "[green]yes[/]" if r.ok else "[red]NO[/]",
        )
    return table
