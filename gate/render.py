"""Terminal tables for the kernel commands (rich)."""

from __future__ import annotations

import math

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from kernels.bench import CellResult
from kernels.parity import ParityReport


def _columns(table: Table, names, left: tuple[str, ...] = ("task", "impl")) -> None:
    """Text columns left-aligned, numbers right-aligned."""
    for name in names:
        table.add_column(name, justify="left" if name in left else "right")


def _case(r: dict) -> tuple[str, str, str, str]:
    """The leading cells of a collector row: task, impl, N, threads."""
    return r["task"], r["impl"], str(r["num_envs"]), str(r["threads"])


def _num(x: float, fmt: str) -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, fmt)


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
        "ok",
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
            _num(r.noise_level, "g"),
            f"{worst.name}",
            _num(worst.max_abs, ".2e"),
            _num(worst.max_rel, ".2e"),
            str(sum(a.mismatches for a in r.arrays)),
            "[green]yes[/]" if r.ok else "[red]NO[/]",
        )
    return table


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
        ("x numpy", "right"),
        ("/ hand", "right"),
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
                    cell.task, str(cell.num_envs), str(row["threads"]), row["impl"],
                    f"[red]parity failed: {row['parity_failed_arrays']}[/]", *[""] * 9,
                )  # fmt: skip
                continue
            table.add_row(
                cell.task,
                str(cell.num_envs),
                str(row["threads"]),
                row["impl"],
                _num(row["ms_median"], ".3f"),
                _num(row["iqr_pct"], ".1f"),
                _num(row["menv_steps_per_s"], ".2f"),
                _num(row["speedup_vs_numpy"], ".1f"),
                _num(row["vs_handwritten"], ".3f"),
                _num(cell.bytes_per_call / 1e6, ".1f"),
                _num(row["gb_per_s"], ".1f"),
                _num(row["pct_of_copy"], ".0f"),
                _num(row["cpu_util"], ".2f"),
                str(row["samples"]),
            )
        table.add_section()
    return table


def jit_table(rows: list[dict]) -> Table:
    table = Table(
        title="JIT, in fresh processes: compile (empty cache) and cache load, apart from steady state"
    )
    _columns(table, ("task", "impl", "compile s", "cache load s", "import kernels s"))
    for r in rows:
        table.add_row(
            r["task"], r["impl"], f"{r['compile_s']:.2f}", f"{r['cache_load_s']:.3f}", f"{r['import_s']:.3f}"
        )
    return table


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
    _columns(table, columns, left=("commit", "task", "impl"))
    for r in rows:
        table.add_row(
            r["commit"][:8], r["task"], r["impl"], str(r["num_envs"]), str(r["threads"]), str(r["processes"]),
            str(r["pairs"]), f"{r['median_ratio']:.3f}", f"[{r['ci_low']:.3f}, {r['ci_high']:.3f}]",
            f"{r['ci_width_pct']:.1f}",
        )  # fmt: skip
    return table


def console(*, stderr: bool = False) -> Console:
    """A console that keeps wide tables whole when output goes to a file or a pipe (rich assumes 80 columns)."""
    probe = Console(stderr=stderr)
    return probe if probe.is_terminal else Console(stderr=stderr, width=200)


_DECISION_STYLE = {"pass": "green", "fail": "red", "inconclusive": "yellow", "error": "magenta"}
_VERDICT_STYLE = {
    "approve": "bold green",
    "reject": "bold red",
    "inconclusive": "bold yellow",
    "error": "bold magenta",
}


def cost_table(runs: list[dict]) -> Table:
    """``fusegate kernels cost``: per-call cost of each cell, and how far fresh measurements of it differ."""
    first = runs[0]
    seconds = ", ".join(f"{r['seconds']['fill'] + r['seconds']['valgrind']:.0f} s" for r in runs)
    table = Table(
        title=f"cost per call under callgrind {first['valgrind']} (Numba target {first['target']}, "
        f"{first['jobs']} valgrind processes; {len(runs)} measurement(s): {seconds})",
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
            c["task"], c["impl"], per, str(c["num_envs"]), str(c["calls"]), f"{c['instructions']:,.0f}",
            f"{c['l1_misses']:,.0f}", f"{c['ll_misses']:,.0f}", f"{c['estimated_cycles']:,.0f}", f"{c['spread']:.2%}",
        ]  # fmt: skip
        if len(runs) > 1:
            others = [r["cells"][i] for r in runs[1:] if not r["cells"][i]["error"]]
            differ = [
                max((abs(o[m] / c[m] - 1) for o in others), default=float("nan"))
                for m in ("instructions", "estimated_cycles")
            ]
            row.append(f"{differ[0]:.4%} / {differ[1]:.3%}")
        table.add_row(*row)
    return table


def verdict_table(evaluation) -> Table:
    """The gate's per-cell table for one evaluation (``gate.api.schemas.EvaluationOut``)."""
    table = Table(
        title=f"fusegate gate: base {evaluation.base_sha[:12]} -> head {evaluation.head_sha[:12]}",
        caption=f"policy: {evaluation.policy_source}",
    )
    for col in (
        "machine",
        "kind",
        "task",
        "N",
        "thr",
        "impl",
        "vs",
        "time",
        "95% CI",
        "cost",
        "margin",
        "q",
        "n",
        "decision",
        "by",
        "reason",
    ):
        table.add_column(
            col,
            justify="right" if col in ("N", "thr", "time", "95% CI", "cost", "margin", "q", "n") else "left",
        )
    for c in evaluation.comparisons:
        ci = "-" if c.low is None else f"[{c.low:.3f}, {c.high:.3f}]"
        style = _DECISION_STYLE.get(c.decision, "")
        table.add_row(
            c.machine,
            c.kind,
            c.task,
            _num(c.num_envs, "d"),
            _num(c.threads, "d"),
            c.impl,
            c.baseline,
            _num(c.ratio, ".3f"),
            ci,
            _num(c.cost_ratio, ".4f"),
            f"{c.margin:.1%}",
            _num(c.q_value, ".2g"),
            f"{c.groups}x{c.samples // max(c.groups, 1)}" if c.samples else "-",
            f"[{style}]{c.decision}[/]",
            c.signal,
            c.reason,
        )
    return table


def print_verdict(evaluation) -> None:
    """The verdict's table and its reasons on stdout (``fusegate gate``, ``fusegate run``)."""
    out = console()
    out.print(verdict_table(evaluation))
    for line in verdict_lines(evaluation):
        out.print(line)


def verdict_lines(evaluation) -> list[str]:
    style = _VERDICT_STYLE.get(evaluation.verdict, "")
    lines = [f"[{style}]verdict: {evaluation.verdict.upper()}[/]", *(f"  {r}" for r in evaluation.reasons)]
    if any(c.kind == "head_vs_base" and c.signal == "time" for c in evaluation.comparisons):
        lines.append(
            "  asv continuous calls a timing 'slower' from pooled samples (Mann-Whitney p < 0.002 and a 1.1 factor); "
            "the gate's time rows use per-process intervals and the cost rows exact counts, so the two can differ: "
            f"fusegate rules --base {evaluation.base_sha[:12]} --head {evaluation.head_sha[:12]} shows both rules "
            "on these samples"
        )
    return lines


def store_bench_table(row: dict, url: str) -> Table:
    table = Table(title=f"Evaluation of one PR against a filled store ({url})")
    for col in ("results in store", "cells", "verdict", "repeats", "median ms", "p95 ms", "max ms"):
        table.add_column(col, justify="right")
    table.add_row(
        f"{row['results_in_store']:,}",
        str(row["cells"]),
        row["verdict"],
        str(row["repeats"]),
        f"{row['median_ms']:.1f}",
        f"{row['p95_ms']:.1f}",
        f"{row['max_ms']:.1f}",
    )
    return table


def rules_table(rows: list[dict], base: str, head: str) -> Table:
    table = Table(
        title=f"asv's rule vs the gate's: timing cells of {base[:12]} -> {head[:12]}, head slowed by a factor"
    )
    cols = ("injected", "cells", "asv: worse", "gate: fail", "gate: pass", "gate: inconclusive",
            "cost cells", "asv: cost worse", "gate: cost fail")  # fmt: skip
    for col in cols:
        table.add_column(col, justify="right")
    for r in rows:
        table.add_row(
            f"x{r['injected']:g}",
            *(str(r[k]) for k in ("cells", "asv_worse", "gate_fail", "gate_pass", "gate_inconclusive")),
            *(str(r[k]) for k in ("cost_cells", "asv_cost_worse", "gate_cost_fail")),
        )
    return table


def collect_check_table(rows: list[dict]) -> Table:
    """``fusegate collect --check``: each collector's rollout against the reference's."""
    table = Table(title="End-to-end collector against the NumPy reference's rollout (same seed, same steps)")
    for col in ("task", "impl", "N", "thr", "steps", "resets", "max reward diff", "check"):
        table.add_column(col, justify="left" if col in ("task", "impl", "check") else "right")
    for r in rows:
        diff = "-" if r["max_reward_diff"] is None else f"{r['max_reward_diff']:.2g}"
        check = "[green]ok[/]" if r["ok"] else f"[red]{escape(r['message'])}[/]"
        table.add_row(r["task"], r["impl"], str(r["num_envs"]), str(r["threads"]), str(r["steps"]), str(r["resets"]),
                      diff, check)  # fmt: skip
    return table


def collect_table(rows: list[dict]) -> Table:
    """``fusegate collect``: one row per (task, impl, N, threads), phases in us per env-step."""
    from kernels.sim.collector import PHASES

    table = Table(
        title="End-to-end collector: microseconds per env-step by phase (mean over the timed steps)"
    )
    _columns(
        table, ("task", "impl", "N", "thr", "env-steps/s", "step ms p50", "p95", *PHASES, "overhead", "cpu")
    )
    for r in rows:
        per = r["us_per_env_step"]
        table.add_row(
            *_case(r),
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
    _columns(
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
            *_case(r),
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
    _columns(table, ("task", "impl", "N", "thr", "call", "per step", "median us", "p95 us", "us/env-step"))
    for r in rows:
        for name, c in r["calls"].items():
            table.add_row(
                *_case(r),
                name,
                f"{c['per_step']:.2f}",
                f"{c['median_us']:.1f}",
                f"{c['p95_us']:.1f}",
                f"{c['us_per_env_step']:.3f}",
            )
    table.caption = escape("kernel.update_state includes kernel._run and the boundary checks")
    return table


def bot_bench_table(row: dict) -> Table:
    table = Table(
        title="fusegate bot: last required results arrive -> commit status posted",
        caption=f"base {row['base'][:12]} -> head {row['head'][:12]}, {row['results']} result files; "
        f"statuses: {', '.join(row['states'])}",
    )
    for col in ("repeats", "median", "p95", "max", "upload (POST /api/runs) median"):
        table.add_column(col, justify="right")
    table.add_row(
        str(row["repeats"]),
        f"{row['latency_median_s'] * 1e3:.0f} ms",
        f"{row['latency_p95_s'] * 1e3:.0f} ms",
        f"{row['latency_max_s'] * 1e3:.0f} ms",
        f"{row['upload_median_s'] * 1e3:.0f} ms",
    )
    return table


def dashboard_bench_table(rows: list[dict], facts: dict) -> Table:
    table = Table(
        title=f"fusegate dashboard: server time per request, {facts['results_in_store']:,} results in the store",
        caption=f"{facts['repeats']} requests per page, round-robin; history shows {facts['history_points']} points",
    )
    for col in ("page", "median", "p95", "max", "bytes"):
        table.add_column(col, justify="left" if col == "page" else "right")
    for r in rows:
        table.add_row(r["page"], f"{r['median_ms']:.1f} ms", f"{r['p95_ms']:.1f} ms", f"{r['max_ms']:.1f} ms",
                      f"{r['bytes']:,}")  # fmt: skip
    return table


def changepoints_table(rows: list[dict], facts: dict) -> Table:
    table = Table(
        title="change points: injected steps in this machine's A/A noise",
        caption=f"A/A {facts['base'][:12]} / {facts['head'][:12]}: {facts['cells']} cells, noise sd "
        f"{facts['noise_sd']:.1%}; {facts['series']} histories of {facts['length']} commits per step size "
        "(a third each with 0, 1, 2 steps); found = within 1 commit",
    )
    for col in ("method", "step", "recall", "precision", "false / 100 commits", "ms / history"):
        table.add_column(col, justify="left" if col == "method" else "right")
    for r in rows:
        table.add_row(r["method"], f"{r['step']:.0%}", f"{r['recall']:.2f}", _num(r["precision"], ".2f"),
                      f"{r['false_per_100']:.1f}", f"{r['ms_per_series']:.1f}")  # fmt: skip
    return table


def time_profile_table(rows, title: str) -> Table:
    """``fusegate profile-time``: seconds per benchmark class, split into where its processes spent them."""
    from gate.timeprofile import PHASES

    parts = ("startup", "import", *PHASES, "measuring", "asv")
    table = Table(title=title)
    for col in ("what", "processes", "wall s", "share", *parts):
        table.add_column(col, justify="left" if col == "what" else "right")
    total = sum(r.wall_s for r in rows) or 1.0
    for r in rows:
        cells = [f"{r.parts[p]:.1f}" if p in r.parts else "" for p in parts]
        table.add_row(r.name, str(r.processes or ""), f"{r.wall_s:.1f}", f"{r.wall_s / total:.0%}", *cells)
    table.add_row("total", str(sum(r.processes for r in rows)), f"{total:.1f}", "", *[""] * len(parts))
    return table
