"""The ``fusegate`` command: one function per command."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

import kernels
from gate import cli_bot, cli_dashboard, cli_run, cli_store, render
from kernels import bench, parity, registry

DEFAULT_BENCH_ENVS = (2048, 8192, 32768, 131072)
DEFAULT_BENCH_THREADS = (1, 2)


def _list(kind: Callable[[str], object], allowed: Sequence[str] | None = None) -> Callable[[str], list]:
    def parse(text: str) -> list:
        items = [kind(x.strip()) for x in text.split(",") if x.strip()]
        if not items:
            raise argparse.ArgumentTypeError("expected a comma-separated list, got nothing")
        unknown = [x for x in items if allowed is not None and x not in allowed]
        if unknown:
            raise argparse.ArgumentTypeError(
                f"unknown value(s) {', '.join(map(str, unknown))}; choose from {', '.join(allowed)}"
            )
        return items

    return parse


def _int_at_least(minimum: int, what: str) -> Callable[[str], int]:
    """An argparse type: an integer >= ``minimum``, refused as "expected <what>"."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"expected {what}, got {value}")
        return value

    return parse


_positive_int = _int_at_least(1, "a positive integer")
_count = _int_at_least(0, "a count (0 or more)")


def _noise_level(text: str) -> float:
    value = float(text)
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"noise level must be >= 0, got {text}")
    return value


def _progress(console: Console) -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    )


def cmd_kernels_parity(args: argparse.Namespace) -> int:
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
    with _progress(render.console(stderr=True)) as progress:
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
        render.console().print(render.parity_table(reports))
        render.console().print(
            "[green]parity holds[/]" if ok else "[red]parity FAILED: outside spec E5 tolerance[/]"
        )
    return 0 if ok else 1


def _bench(tasks: list[str], impls: list[str], num_envs: list[int], threads: list[int], repeats: int) -> list:
    cells = [(t, n, th) for t in tasks for n in num_envs for th in threads]
    results = []
    with _progress(render.console(stderr=True)) as progress:
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
    pairs = [(t, i) for t in tasks for i in impls if i in registry.available(t) and i != kernels.REFERENCE]
    results = []
    with _progress(render.console(stderr=True)) as progress:
        job = progress.add_task("compile", total=len(pairs))
        for task, impl in pairs:
            progress.update(job, description=f"compile and cache-load {task} {impl} (fresh processes)")
            results.append(bench.jit_times(task, impl))
            progress.advance(job)
    return results


def _bench_and_print(args: argparse.Namespace, tasks: list[str], impls: list[str]) -> int:
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
        render.console().print(render.bench_table(results, title))
        if jit:
            render.console().print(render.jit_table(jit))
    return 0 if all(row["parity_ok"] for c in results for row in c.rows) else 1


def cmd_kernels_bench(args: argparse.Namespace) -> int:
    return _bench_and_print(args, args.task, args.impl)


def cmd_kernels_cost(args: argparse.Namespace) -> int:
    """Per-call cost of each cell under callgrind, in ``--processes`` fresh measurements; their differences."""
    from kernels import cost

    cells = [
        cost.Cell(task=t, impl=i, num_envs=n, kind=kind)
        for t in args.task
        for i in args.impl
        if i in registry.available(t)
        for kind, scales in ((cost.UPDATE_STATE, args.num_envs), (cost.COLLECTOR, args.collector_envs))
        for n in scales
    ]
    cost.ensure_valgrind(
        install=args.install, say=render.console(stderr=True).print
    )  # CostError: a ValueError
    runs = []
    with _progress(render.console(stderr=True)) as progress:
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
        render.console().print(render.cost_table(runs))
    return 0 if all(not c["error"] for run in runs for c in run["cells"]) else 1


def _collect_check(args: argparse.Namespace, threads: int) -> int:
    """``fusegate collect --check``: kernels.sim.trajectory.check per task and scale, one row per implementation."""
    from kernels.sim import trajectory

    rows = []
    with _progress(render.console(stderr=True)) as progress:
        job = progress.add_task("rollouts", total=len(args.task) * len(args.num_envs))
        for task in args.task:
            impls = [i for i in args.impl if i in registry.available(task)]
            for n in args.num_envs:
                progress.update(
                    job, description=f"{task} N={n}: {len(impls) + 1} rollouts of {args.steps} steps"
                )
                found = trajectory.check(
                    task, impls, steps=args.steps, num_envs=n, seed=args.seed, threads=threads
                )
                rows += [
                    {**c.to_dict(), "num_envs": n, "threads": threads, "steps": args.steps}
                    for c in found.values()
                ]
                progress.advance(job)
    if args.json:
        print(json.dumps({"checks": rows}, indent=2))
    else:
        render.console().print(render.collect_check_table(rows))
    return 0 if all(r["ok"] for r in rows) else 1


def cmd_kernels_show_source(args: argparse.Namespace) -> int:
    """Print the source the ``assembled`` implementation generates for a task's plan."""
    from importlib import import_module

    plan = registry.default_plan(args.task) if args.plan is None else _read_plan(args.task, args.plan)
    generator = import_module(f"kernels.assembled.{args.task}")
    print(generator.generate(plan), end="")
    return 0


def _read_plan(task: str, path: str):
    from kernels.spec import plan_from_json

    try:
        with open(path) as f:
            text = f.read()
    except OSError as exc:
        raise ValueError(f"cannot read plan file {path}: {exc.strerror}") from None
    return plan_from_json(text, base=registry.default_plan(task), source=path)


def cmd_pairs(args: argparse.Namespace) -> int:
    """Median paired ratio per cell with its hierarchical-bootstrap 95% CI, from the asv sidecar."""
    from gate import pairs

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
        render.console().print(render.pairs_table(rows))
    return 0


def cmd_collect(args: argparse.Namespace) -> int:
    from kernels.placement import Placement
    from kernels.sim.baseline import PhysicsBaseline
    from kernels.sim.collector import Collector

    applied = Placement.from_env().apply()  # before any array exists
    threads = args.threads or applied.threads
    if args.check:
        return _collect_check(args, threads)
    cases = [(t, i, n) for t in args.task for i in args.impl for n in args.num_envs]
    rows = []
    with _progress(render.console(stderr=True)) as progress:
        for task, impl, n in cases:
            job = progress.add_task(f"{task} {impl} N={n}: building", total=args.warmup + args.steps)
            collector = Collector(task, impl, num_envs=n, threads=threads, seed=args.seed)
            progress.update(job, description=f"{task} {impl} N={n}")
            baseline = PhysicsBaseline(collector) if args.physics_baseline else None
            try:
                report = collector.run(
                    args.steps,
                    warmup=args.warmup,
                    baseline=baseline,
                    calls=args.calls,
                    progress=lambda done, total, job=job: progress.update(job, completed=done),
                )
            finally:
                if baseline:
                    baseline.close()
            progress.remove_task(job)
            rows.append(report.to_dict())
    if args.json:
        print(json.dumps(rows[0] if len(rows) == 1 else {"cases": rows}, indent=2))
        return 0
    out = render.console()
    out.print(render.collect_table(rows))
    if args.physics_baseline:
        out.print(render.physics_table(rows))
    if args.calls:
        out.print(render.calls_table(rows))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="fusegate", description="Performance-regression gate for fused RL-environment kernels."
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    kernels_cmd = commands.add_parser("kernels", help="check and time the update_state kernels")
    kernel_commands = kernels_cmd.add_subparsers(dest="kernels_command", required=True, metavar="COMMAND")

    par = kernel_commands.add_parser("parity", help="compare implementations against the NumPy reference")
    _task_impl_options(par)
    par.add_argument("--num-envs", type=_list(_positive_int), default=[1, 7, 1000, 4099], metavar="N[,N...]")
    par.add_argument("--seeds", type=_list(int), default=[0, 1, 2], metavar="S[,S...]")
    par.add_argument("--threads", type=_list(_positive_int), default=[1, 2], metavar="T[,T...]")
    par.add_argument("--noise-level", type=_list(_noise_level), default=[0.0, 1.0], metavar="L[,L...]")
    par.add_argument("--json", action="store_true", help="print JSON instead of a table")
    par.set_defaults(func=cmd_kernels_parity)

    bench_cmd = kernel_commands.add_parser("bench", help="time implementations side by side in one process")
    _task_impl_options(bench_cmd)
    _bench_options(bench_cmd, repeats=20)
    bench_cmd.set_defaults(func=cmd_kernels_bench)

    cost_cmd = kernel_commands.add_parser(
        "cost", help="instructions and simulated cache misses per call under callgrind (the cost signal)"
    )
    _task_impl_options(cost_cmd)
    cost_cmd.add_argument("--num-envs", type=_list(_positive_int), default=[4096, 32768], metavar="N[,N...]")
    cost_cmd.add_argument(
        "--collector-envs",
        type=_list(_positive_int),
        default=[],
        metavar="N[,N...]",
        help="also one collector step of N envs, without MuJoCo's physics (the gate's quick grid: 64)",
    )
    cost_cmd.add_argument(
        "--calls", type=_positive_int, default=3, help="measured calls per fused cell (default 3)"
    )
    cost_cmd.add_argument(
        "--jobs", type=_positive_int, default=None, help="valgrind processes (default: CPUs)"
    )
    cost_cmd.add_argument(
        "--processes", type=_positive_int, default=1, help="measure N times in fresh processes and compare"
    )
    cost_cmd.add_argument(
        "--install", action="store_true", help="apt-get install valgrind when it is missing"
    )
    cost_cmd.add_argument("--json", action="store_true", help="print JSON instead of a table")
    cost_cmd.set_defaults(func=cmd_kernels_cost)

    pairs_cmd = commands.add_parser(
        "pairs", help="paired implementation/hand-written ratios from the asv sidecar"
    )
    pairs_cmd.add_argument("directory", nargs="?", default=".asv/fusegate", help="default: .asv/fusegate")
    pairs_cmd.add_argument("--json", action="store_true", help="print JSON instead of a table")
    pairs_cmd.set_defaults(func=cmd_pairs)

    cli_run.add_commands(commands)
    cli_store.add_commands(commands)
    cli_bot.add_commands(commands)
    cli_dashboard.add_commands(commands)

    collect = commands.add_parser(
        "collect", help="run the end-to-end collector (MuJoCo G1 physics + update_state) and time its phases"
    )
    _task_impl_options(collect)
    collect.add_argument("--num-envs", type=_list(_positive_int), default=[1024], metavar="N[,N...]")
    collect.add_argument("--steps", type=_positive_int, default=100, help="timed steps (default 100)")
    collect.add_argument("--warmup", type=_count, default=10, help="untimed steps first (default 10)")
    collect.add_argument(
        "--threads",
        type=_positive_int,
        default=None,
        help="MuJoCo and Numba threads (default: the placement's)",
    )
    collect.add_argument("--seed", type=int, default=0)
    collect.add_argument(
        "--physics-baseline",
        action="store_true",
        help="also step every timed state with a bare mujoco.batch and with mujoco.rollout, and compare",
    )
    collect.add_argument(
        "--calls",
        action="store_true",
        help="also time each call of the step where it runs (policy, replay, env, MuJoCo, kernel)",
    )
    collect.add_argument(
        "--check",
        action="store_true",
        help="instead of timing, roll each collector out --steps steps (seed --seed) and compare it with the "
        "NumPy reference's rollout, as the gate's CollectorCheck does (its quick grid: --num-envs 64 --steps 16 "
        "--threads 1); exit 1 when one fails",
    )
    collect.add_argument("--json", action="store_true", help="print JSON instead of a table")
    collect.set_defaults(func=cmd_collect)

    show = kernel_commands.add_parser("show-source", help="print the generated source of an assembled kernel")
    show.add_argument("--task", choices=kernels.TASKS, required=True)
    show.add_argument(
        "--plan", metavar="FILE", help="a plan as JSON (kernels.spec format); default: the task's"
    )
    show.set_defaults(func=cmd_kernels_show_source)
    return parser


def _task_impl_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--task", type=_list(str, kernels.TASKS), default=list(kernels.TASKS), metavar="TASK[,TASK...]"
    )
    p.add_argument(
        "--impl", type=_list(str, kernels.IMPLS), default=list(kernels.IMPLS), metavar="IMPL[,IMPL...]"
    )


def _bench_options(p: argparse.ArgumentParser, *, repeats: int) -> None:
    p.add_argument(
        "--num-envs", type=_list(_positive_int), default=list(DEFAULT_BENCH_ENVS), metavar="N[,N...]"
    )
    p.add_argument(
        "--threads", type=_list(_positive_int), default=list(DEFAULT_BENCH_THREADS), metavar="T[,T...]"
    )
    p.add_argument("--repeats", type=_positive_int, default=repeats, help="interleaved rounds per cell")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.add_argument(
        "--no-jit", action="store_true", help="skip measuring compile and cache-load time in fresh processes"
    )


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except ValueError as exc:  # bad input that got past argparse: say what, not a traceback
        print(f"fusegate: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
