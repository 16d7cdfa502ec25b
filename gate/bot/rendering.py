"""A verdict in markdown that fits a narrow column: the body of the PR comment (``gate.bot.report``) and of a CI
job's step summary (``fusegate gate --summary``).

``markdown`` renders the verdict summary (``gate.evaluate.summary``): the heading, the headline, the commits and
the counts, one line per finding (within ``WIDTH``) with reference-style links to its dashboard cell
(``cell_link``), then every row collapsed in ``<details>`` (``verdict_table``, at most ``MAX_ROWS``).
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from urllib.parse import quote, urlencode

from gate.domain.vocabulary import Decision, Kind
from gate.evaluate import summary as digest

MAX_ROWS = 60  # cells listed in the comment's collapsed table, problems first; the link has all of them
WIDTH = 120  # no line outside the collapsed table is wider
SHOWN = 4  # findings listed before "and N more"


def cell(c) -> str:
    parts = [c.task or "-"]
    if c.num_envs:
        parts.append(f"N={c.num_envs}")
    if c.threads:
        parts.append(f"{c.threads} thr")
    return " ".join(parts)


def number(x: float | None, fmt: str) -> str:
    return "-" if x is None else format(x, fmt)


def escape(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def verdict_table(evaluation) -> list[str]:
    """The verdict's rows as a markdown table, problems first (at most ``MAX_ROWS``), then its reasons."""
    order = {
        Decision.FAIL: 0,
        Decision.ERROR: 1,
        Decision.INCONCLUSIVE: 2,
        Decision.ACCEPTED: 3,
        Decision.PASS: 4,
    }
    cells = sorted(evaluation.comparisons, key=lambda c: order.get(c.decision, 4))
    lines = [
        "| machine | kind | cell | impl vs baseline | time | 95% CI | cost | margin | decision | by | reason |",
        "|---|---|---|---|--:|--:|--:|--:|---|---|---|",
    ]
    for c in cells[:MAX_ROWS]:
        ci = "-" if c.low is None else f"[{c.low:.3f}, {c.high:.3f}]"
        lines.append(
            f"| {escape(c.machine)} | {c.kind} | {cell(c)} | {c.impl or '-'} vs {c.baseline or '-'} | "
            f"{number(c.ratio, '.3f')} | {ci} | {number(c.cost_ratio, '.4f')} | {c.margin:.1%} | **{c.decision}** | "
            f"{c.signal} | {escape(c.reason)} |"
        )
    if len(cells) > MAX_ROWS:
        rest = cells[MAX_ROWS:]
        passed = sum(c.decision == Decision.PASS for c in rest)
        lines.append(f"\n{len(rest)} more cells ({passed} pass) are in the full verdict.")
    return [*lines, "", *(f"- {escape(r)}" for r in evaluation.reasons)]


def cell_link(site: str, c) -> str:
    """The dashboard page of one row's cell: its history for a measured cell, else the PR page's rows."""
    if c.num_envs and c.threads and c.task and c.impl and not c.kind.startswith("collector"):
        query = {
            "metric": "paired" if c.kind == Kind.IMPL_VS_BASELINE else "time",
            "task": c.task,
            "impl": c.impl,
            "num_envs": c.num_envs,
            "threads": c.threads,
        }
        return f"{site}/history/{quote(c.machine, safe='')}?{urlencode(query)}"
    return ""


def wrap(text: str, indent: str = "") -> list[str]:
    return textwrap.wrap(text, WIDTH, subsequent_indent=indent, break_on_hyphens=False) or [""]


def summary_markdown(s: digest.VerdictSummary, *, site: str = "") -> tuple[list[str], list[str]]:
    """The summary's findings as markdown list items (each within ``WIDTH``), and their link definitions: one
    per finding whose worst row has a dashboard cell, when ``site`` (the service's URL) is set."""
    lines, links = [], []
    listed = s.listed
    for f in listed[:SHOWN]:
        text = f"- **{f.mark}** {escape(f.what)} vs {escape(f.against)}: {escape(f.how_much)}"
        where = " · ".join(x for x in (f.where, f.then) if x)
        url = cell_link(site, f.worst) if site else ""
        if url:
            links.append(f"[{len(links) + 1}]: {url}")
            where += f" · [cell][{len(links)}]"
        lines += wrap(text, "  ") + wrap(f"  {escape(where)}", "  ")
    if len(listed) > SHOWN:
        lines.append(f"- and {len(listed) - SHOWN} more: every row is below")
    if s.open_note:
        lines += wrap(f"- **{digest.MARK[Decision.INCONCLUSIVE]}** {escape(s.open_note)}", "  ")
    return lines, links


def markdown(
    evaluation,
    *,
    heading: str,
    commits: str = "",
    site: str = "",
    link: str = "",
    notes: Sequence[str] = (),
    then: Sequence[str] = (),
) -> str:
    """A verdict as markdown: ``heading``, the headline, ``notes``, the commits and the counts, the findings,
    ``then``, the ratio's direction and ``link``, then every row and the reasons collapsed."""
    s = digest.of(evaluation)
    findings, links = summary_markdown(s, site=site)
    lines = [heading, "", *wrap(f"**{escape(s.headline)}**"), ""]
    if notes:
        lines += [*notes, ""]
    lines += wrap(" · ".join(x for x in (commits, s.counts) if x))
    if findings:
        lines += ["", *findings]
    if then:
        lines += ["", *then]
    tail = f"{digest.RATIO[0].upper()}{digest.RATIO[1:]}."
    lines += ["", *wrap(tail + (f" [Full verdict]({link})" if link else ""))]
    lines += [
        "",
        f"<details><summary>All {len(evaluation.comparisons)} rows and the reasons</summary>",
        "",
        *verdict_table(evaluation),
    ]
    if links:
        lines += ["", *links]
    lines += ["", "</details>"]
    return "\n".join(lines) + "\n"
