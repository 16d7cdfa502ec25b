"""What the commands print: a rich console (stdout, or stderr for progress), table helpers, the verdict
(``fusegate gate`` and ``fusegate run`` print it alike) and the time profile."""

from __future__ import annotations

import math
import textwrap

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from gate.domain.vocabulary import Decision, Kind, Signal, Verdict


def console(*, stderr: bool = False) -> Console:
    """A console that keeps wide tables whole when output goes to a file or a pipe (rich assumes 80 columns)."""
    probe = Console(stderr=stderr)
    return probe if probe.is_terminal else Console(stderr=stderr, width=200)


def columns(table: Table, names, left: tuple[str, ...] = ("task", "impl")) -> None:
    """Text columns left-aligned, numbers right-aligned."""
    for name in names:
        table.add_column(name, justify="left" if name in left else "right")


def case(r: dict) -> tuple[str, str, str, str]:
    """The leading cells of a collector row: task, impl, N, threads."""
    return r["task"], r["impl"], str(r["num_envs"]), str(r["threads"])


def num(x: float, fmt: str) -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, fmt)


DECISION_STYLE = {
    Decision.PASS: "green",
    Decision.FAIL: "red",
    Decision.INCONCLUSIVE: "yellow",
    Decision.ERROR: "magenta",
}


VERDICT_STYLE = {
    Verdict.APPROVE: "bold green",
    Verdict.REJECT: "bold red",
    Verdict.INCONCLUSIVE: "bold yellow",
    Verdict.ERROR: "bold magenta",
}


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
        style = DECISION_STYLE.get(c.decision, "")
        table.add_row(
            c.machine,
            c.kind,
            c.task,
            num(c.num_envs, "d"),
            num(c.threads, "d"),
            c.impl,
            c.baseline,
            num(c.ratio, ".3f"),
            ci,
            num(c.cost_ratio, ".4f"),
            f"{c.margin:.1%}",
            num(c.q_value, ".2g"),
            f"{c.groups}x{c.samples // max(c.groups, 1)}" if c.samples else "-",
            f"[{style}]{c.decision}[/]",
            c.signal,
            c.reason,
        )
    return table


WIDTH = 100  # the summary's columns: it reads the same in a terminal, a CI log and a narrow pane
SHOWN = 6  # findings listed before "and N more"


def summary_lines(summary, *, base_sha: str, head_sha: str, width: int = WIDTH) -> list[str]:
    """The verdict as ``fusegate gate`` prints it by default (``gate.evaluate.summary.VerdictSummary``): the
    headline, the commits and the counts, one finding per implementation that decided it (what and how much, then
    where), the undecided ones and what would decide them, the improvements, the verdict's reason. Every line fits
    ``width`` columns."""
    from gate.evaluate.summary import MARK, RATIO

    def wrap(text: str, first: str = "") -> list[str]:
        return textwrap.wrap(text, width, initial_indent=first, subsequent_indent=" " * len(first))

    lines = wrap(summary.headline)
    lines += wrap(f"base {base_sha[:12]} -> head {head_sha[:12]} · {summary.counts}")
    listed = summary.listed
    if listed or summary.open_note:
        lines.append("")
    for f in listed[:SHOWN]:
        mark = f"{f.mark:<6} "
        lines += wrap(f"{f.what} vs {f.against}: {f.how_much}", first=mark)
        lines += wrap(" · ".join(x for x in (f.where, f.then) if x), first=" " * len(mark))
    if len(listed) > SHOWN:
        lines.append(f"and {len(listed) - SHOWN} more: --rows all lists every row")
    if summary.open_note:
        lines += wrap(summary.open_note, first=f"{MARK[Decision.INCONCLUSIVE]:<6} ")
    lines.append("")
    if summary.reason:
        lines += wrap(summary.reason)
    lines += wrap(f"{RATIO} · every row: --rows all")
    if summary.policy:
        lines += wrap(f"policy: {summary.policy}")
    return lines


def print_verdict(evaluation, *, rows: str = "summary") -> None:
    """The verdict on stdout (``fusegate gate``, ``fusegate run``): its summary, or with ``rows="all"`` the
    headline, every row's table and the evaluation's reasons."""
    from gate.evaluate import summary

    out = console()
    style = VERDICT_STYLE.get(evaluation.verdict, "")
    if rows != "all":
        first, *rest = summary_lines(
            summary.of(evaluation), base_sha=evaluation.base_sha, head_sha=evaluation.head_sha
        )
        out.print(f"[{style}]{escape(first)}[/]", markup=True, highlight=False)
        for line in rest:
            out.print(line, markup=False, highlight=False, soft_wrap=True)
        return
    out.print(
        f"[{style}]{summary.headline(evaluation.verdict, evaluation.comparisons)}[/]",
        markup=True,
        highlight=False,
    )
    out.print(verdict_table(evaluation))
    for line in verdict_lines(evaluation):
        out.print(line)


def verdict_lines(evaluation) -> list[str]:
    style = VERDICT_STYLE.get(evaluation.verdict, "")
    lines = [f"[{style}]verdict: {evaluation.verdict.upper()}[/]", *(f"  {r}" for r in evaluation.reasons)]
    if any(c.kind == Kind.HEAD_VS_BASE and c.signal == Signal.TIME for c in evaluation.comparisons):
        lines.append(
            "  asv continuous calls a timing 'slower' from pooled samples (Mann-Whitney p < 0.002 and a 1.1 factor); "
            "the gate's time rows use per-process intervals and the cost rows exact counts, so the two can differ "
            "(docs/gate.md, Statistics)"
        )
    return lines


def time_profile_table(rows, title: str) -> Table:
    """``--profile-time``: seconds per benchmark class, split into where its processes spent them."""
    from gate.runner.timeprofile import PHASES

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


def progress(console: Console) -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    )
