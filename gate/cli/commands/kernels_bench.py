"""``fusegate kernels bench``: implementations timed side by side in one process, and their compile times."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

from rich.table import Table

from gate.cli import output

if TYPE_CHECKING:
    from gate.meter.bench import CellResult
from gate.cli.options import (
    bench_options,
    task_impl_options,
)

NAME = ("kernels", "bench")
HELP = "time implementations side by side in one process"


def arguments(p: argparse.ArgumentParser) -> None:
    task_impl_options(p)
    bench_options(p, repeats=20)


def run(args: argparse.Namespace) -> int:
    return _bench_and_print(args, args.task, args.impl)


def _bench(tasks: list[str], impls: list[str], num_envs: list[int], threads: list[int], repeats: int) -> list:
    from gate.meter import bench
    from kernels import registry

    cells = [(t, n, th) for t in tasks for n in num_envs for th in threads]
    results = []
    with output.progress(output.console(stderr=True)) as progress:
        job = progress.add_task("bench", total=len(cells) * repeats)
        for task, n, th in cells:
            progress.update(job, description=f"bench {task} N={n} threads={th}")
            results.append(
                bench.run_cell(
                    task=task,
                    impls=[impl for impl in impls if impl in registry.available(task)],
                    num_envs=n,
                    threads=th,
                    repeats=repeats,
                    on_round=lambda: progress.advance(job),
                )
            )
    return results


def _jit(tasks: list[str], impls: list[str]) -> list[dict]:
    import kernels
    from gate.meter import bench
    from kernels import registry

    pairs = [(t, i) for t in tasks for i in impls if i in registry.available(t) and i != kernels.REFERENCE]
    results = []
    with output.progress(output.console(stderr=True)) as progress:
        job = progress.add_task("compile", total=len(pairs))
        for task, impl in pairs:
            progress.update(job, description=f"compile and cache-load {task} {impl} (fresh processes)")
            results.append(bench.jit_times(task, impl))
            progress.advance(job)
    return results


def _bench_and_print(args: argparse.Namespace, tasks: list[str], impls: list[str]) -> int:
    from gate.meter import bench

    results = _bench(tasks, impls, args.num_envs, args.threads, args.repeats)
    jit = [] if args.no_jit else _jit(tasks, impls)
    machine = bench.machine_summary()
    if args.json:
        print(json.dumps({"machine": machine, "cells": [c.to_dict() for c in results], "jit": jit}, indent=2))
    else:
        title = (
            f"update_state benchmark on {machine['cpu'] or 'this machine'} ({machine['cpus_usable']} CPUs, "
            f"numba {machine['numba']} {machine['threading_layer']}): median of interleaved rounds"
        )
        output.console().print(bench_table(results, title))
        if jit:
            output.console().print(jit_table(jit))
    return 0 if all(row["parity_ok"] for c in results for row in c.rows) else 1


def bench_table(cells: list[CellResult], title: str) -> Table:
    table = Table(title=title)
    columns = (
        ("task", "left"),
        ("N", "right"),
        ("thr", "right"),
        ("impl", "left"),
        ("ms/call", "right"),
        ("IQR %", "right"),
        ("M env-steps/s", "right"),
        ("x reference", "right"),
        ("/ baseline", "right"),
        ("MB/call", "right"),
        ("GB/s", "right"),
        ("% copy", "right"),
        ("CPU", "right"),
        ("n", "right"),
    )
    for name, justify in columns:
        table.add_column(name, justify=justify)
    for cell in cells:
        for row in cell.rows:
            if not row["parity_ok"]:
                table.add_row(
                    cell.task,
                    str(cell.num_envs),
                    str(row["threads"]),
                    row["impl"],
                    f"[red]parity failed: {row['parity_failed_arrays']}[/]",
                    *[""] * 9,
                )
                continue
            table.add_row(
                cell.task,
                str(cell.num_envs),
                str(row["threads"]),
                row["impl"],
                output.num(row["ms_median"], ".3f"),
                output.num(row["iqr_pct"], ".1f"),
                output.num(row["menv_steps_per_s"], ".2f"),
                output.num(row["speedup_vs_reference"], ".1f"),
                output.num(row["vs_baseline"], ".3f"),
                output.num(cell.bytes_per_call / 1e6, ".1f"),
                output.num(row["gb_per_s"], ".1f"),
                output.num(row["pct_of_copy"], ".0f"),
                output.num(row["cpu_util"], ".2f"),
                str(row["samples"]),
            )
        table.add_section()
    return table


def jit_table(rows: list[dict]) -> Table:
    table = Table(
        title="JIT, in fresh processes: compile (empty cache) and cache load, apart from steady state"
    )
    output.columns(table, ("task", "impl", "compile s", "cache load s", "import kernels s"))
    for r in rows:
        table.add_row(
            r["task"], r["impl"], f"{r['compile_s']:.2f}", f"{r['cache_load_s']:.3f}", f"{r['import_s']:.3f}"
        )
    return table
