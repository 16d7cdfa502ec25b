"""``fusegate collect``: the end-to-end collector (MuJoCo G1 physics + update_state), its phases timed, or its rollouts checked."""

from __future__ import annotations

import argparse
import json

from rich.markup import escape
from rich.table import Table

from gate.cli import output
from gate.cli.options import (
    listed,
    nonnegative_int,
    positive_int,
    task_impl_options,
)

NAME = ("collect",)
HELP = "run the end-to-end collector (MuJoCo G1 physics + update_state) and time its phases"


def arguments(p: argparse.ArgumentParser) -> None:
    task_impl_options(p)
    p.add_argument("--num-envs", type=listed(positive_int), default=[1024], metavar="N[,N...]")
    p.add_argument("--steps", type=positive_int, default=100, help="timed steps (default 100)")
    p.add_argument("--warmup", type=nonnegative_int, default=10, help="untimed steps first (default 10)")
    p.add_argument(
        "--threads",
        type=positive_int,
        default=None,
        help="MuJoCo and Numba threads (default: the placement's)",
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--physics-baseline",
        action="store_true",
        help="also step every timed state with a bare mujoco.batch and with mujoco.rollout, and compare",
    )
    p.add_argument(
        "--calls",
        action="store_true",
        help="also time each call of the step where it runs (policy, replay, env, MuJoCo, kernel)",
    )
    p.add_argument(
        "--check",
        action="store_true",
        help="instead of timing, roll each collector out --steps steps (seed --seed) and compare it with the "
        "NumPy reference's rollout, as the gate's CollectorCheck does (its quick grid: --num-envs 64 --steps 16 "
        "--threads 1); exit 1 when one fails",
    )
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")


def run(args: argparse.Namespace) -> int:

    from gate.meter import collect
    from gate.meter.physics import PhysicsBaseline
    from gate.meter.placement import Placement
    from kernels.sim.collector import Collector

    applied = Placement.from_env().apply()  # before any array exists
    threads = args.threads or applied.threads
    if args.check:
        return _collect_check(args, threads)
    cases = [(t, i, n) for t in args.task for i in args.impl for n in args.num_envs]
    rows = []
    with output.progress(output.console(stderr=True)) as progress:
        for task, impl, n in cases:
            job = progress.add_task(f"{task} {impl} N={n}: building", total=args.warmup + args.steps)
            collector = Collector(task, impl, num_envs=n, threads=threads, seed=args.seed)
            progress.update(job, description=f"{task} {impl} N={n}")
            baseline = PhysicsBaseline(collector) if args.physics_baseline else None
            try:
                report = collect.run(
                    collector,
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
    out = output.console()
    out.print(collect_table(rows))
    if args.physics_baseline:
        out.print(physics_table(rows))
    if args.calls:
        out.print(calls_table(rows))
    return 0


def _collect_check(args: argparse.Namespace, threads: int) -> int:
    """``fusegate collect --check``: gate.meter.trajectory.check per task and scale, one row per implementation."""
    from gate.meter import trajectory
    from kernels import registry

    rows = []
    with output.progress(output.console(stderr=True)) as progress:
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
        output.console().print(collect_check_table(rows))
    return 0 if all(r["ok"] for r in rows) else 1


def collect_check_table(rows: list[dict]) -> Table:
    """``fusegate collect --check``: each collector's rollout against the reference's."""
    table = Table(title="End-to-end collector against the NumPy reference's rollout (same seed, same steps)")
    for col in ("task", "impl", "N", "thr", "steps", "resets", "max reward diff", "check"):
        table.add_column(col, justify="left" if col in ("task", "impl", "check") else "right")
    for r in rows:
        diff = "-" if r["max_reward_diff"] is None else f"{r['max_reward_diff']:.2g}"
        check = "[green]ok[/]" if r["ok"] else f"[red]{escape(r['message'])}[/]"
        table.add_row(
            r["task"],
            r["impl"],
            str(r["num_envs"]),
            str(r["threads"]),
            str(r["steps"]),
            str(r["resets"]),
            diff,
            check,
        )
    return table


def collect_table(rows: list[dict]) -> Table:
    """``fusegate collect``: one row per (task, impl, N, threads), phases in us per env-step."""

    from kernels.sim.collector import PHASES

    table = Table(
        title="End-to-end collector: microseconds per env-step by phase (mean over the timed steps)"
    )
    output.columns(
        table, ("task", "impl", "N", "thr", "env-steps/s", "step ms p50", "p95", *PHASES, "overhead", "cpu")
    )
    for r in rows:
        per = r["us_per_env_step"]
        table.add_row(
            *output.case(r),
            f"{r['env_steps_per_s']:.0f}",
            f"{r['step_ms']['median']:.1f}",
            f"{r['step_ms']['p95']:.1f}",
            *(f"{per[p]:.3f}" for p in PHASES),
            f"{r['overhead_us_per_env_step']:.3f}",
            f"{r['cpu_util']:.2f}",
        )
    table.caption = (
        "overhead = getters + update_state + reset + replay + other (all but physics and the policy forward "
        "pass); physics includes mj_forward of reset rows; cpu = CPU seconds per wall second"
    )
    return table


def _spread(ratio: dict) -> str:
    return f"{ratio['median']:.3f} [{ratio['p5']:.2f}, {ratio['p95']:.2f}]"


def physics_table(rows: list[dict]) -> Table:
    """``fusegate collect --physics-baseline``: the collector's batch step vs MuJoCo stepping alone."""
    table = Table(
        title="Physics: the collector's batch step vs the same states stepped alone (per-step ratios)"
    )
    output.columns(
        table,
        (
            "task",
            "impl",
            "N",
            "thr",
            "collector ms",
            "batch ms",
            "rollout ms",
            "collector/batch",
            "rollout/batch",
        ),
    )
    for r in rows:
        b = r["physics_baseline"]
        table.add_row(
            *output.case(r),
            f"{b['collector_ms']:.1f}",
            f"{b['batch_ms']:.1f}",
            f"{b['rollout_ms']:.1f}",
            _spread(b["collector_vs_batch"]),
            _spread(b["rollout_vs_batch"]),
        )
    table.caption = escape(
        "median of per-step ratios [p5, p95]; batch = mujoco.batch.Batch alone, rollout = mujoco.rollout"
    )
    return table


def calls_table(rows: list[dict]) -> Table:
    """``fusegate collect --calls``: each call of the step, timed where it runs."""
    table = Table(title="Collector calls, timed in the loop (after physics and the policy, on cold caches)")
    output.columns(
        table, ("task", "impl", "N", "thr", "call", "per step", "median us", "p95 us", "us/env-step")
    )
    for r in rows:
        for name, c in r["calls"].items():
            table.add_row(
                *output.case(r),
                name,
                f"{c['per_step']:.2f}",
                f"{c['median_us']:.1f}",
                f"{c['p95_us']:.1f}",
                f"{c['us_per_env_step']:.3f}",
            )
    table.caption = escape("kernel.update_state includes kernel._run and the boundary checks")
    return table
