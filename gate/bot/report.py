"""What the bot tells GitHub, as pure functions: the commit status of a check and the PR comment's markdown.

The comment and a CI job's step summary render the same verdict summary (``gate.evaluate.summary``) in markdown
that fits a narrow column: the verdict word as the heading, the headline, the commits and the counts, one line per
finding with reference-style links to its dashboard cell, then every row collapsed in ``<details>``.

Accepted rows (``gate.acceptance``) are findings of their own, with who accepted them and why; a reject says how
to accept its first fail on record, and the answers to the PR's ``/fusegate`` commands follow the findings.

Status states map the gate's verdicts: approve -> success, reject -> failure, error -> error; inconclusive stays
pending while the policy's round budget lasts (the runners are asked for more rounds) and is a failure once the
budget is spent or no more rounds are coming (inconclusive is never a pass). Machines that have not reported keep
the status pending until the check's deadline, then it is an error that names them.

That status (``CONTEXT``) is the one a branch protection rule requires. A second one, ``VERDICT_CONTEXT``, is never
required: its description leads with the verdict's word and its state tells reject (failure) from inconclusive
(pending: more rounds would decide) from error, which the required status, red for all three, does not.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from urllib.parse import quote, urlencode

from gate import acceptance
from gate.domain.vocabulary import Decision, Kind, Verdict
from gate.evaluate import summary as digest
from gate.evaluate.reads import open_cells
from gate.policy import POLICY_FILE, Policy, judged_by

CONTEXT = "fusegate"  # the required commit status, the same from the service's bot and the hosted judge
VERDICT_CONTEXT = "fusegate/verdict"  # not required: reject, inconclusive and error told apart
MARKER = "<!-- fusegate:pr-comment -->"  # the bot's one comment per pull request is found by this
MAX_ROWS = 60  # cells listed in the comment's collapsed table, problems first; the link has all of them
WIDTH = 120  # no line outside the collapsed table is wider
SHOWN = 4  # findings listed before "and N more"


@dataclass(frozen=True, kw_only=True)
class Status:
    state: str  # pending | success | failure | error
    description: str
    settled: bool  # no further results can change it without a new upload

    @property
    def posted(self) -> str:
        return f"{self.state}: {self.description}"


@dataclass(frozen=True, kw_only=True)
class Answered:
    """A comment's ``/fusegate`` commands as the worker answered them: ``answers`` holds one
    ``{"command", "text", "ok"}`` per command."""

    login: str
    url: str
    answers: tuple[dict, ...]


@dataclass(frozen=True, kw_only=True)
class Waiting:
    required: tuple[str, ...]  # empty: any machine
    ready: tuple[str, ...]  # machines with results of both base and head


def _hours(seconds: float) -> str:
    return f"{seconds / 3600:.3g} h" if seconds >= 3600 else f"{seconds:.0f} s"


def waiting_status(w: Waiting, *, now: datetime, deadline: datetime, window_s: float) -> Status | None:
    """Pending (or, past the deadline, error) while required machines have not reported; None once they all have."""
    if w.required:
        missing = [m for m in w.required if m not in w.ready]
        if not missing:
            return None
        if now >= deadline:
            return Status(
                state="error",
                description=f"no results from {', '.join(missing)} within {_hours(window_s)}",
                settled=True,
            )
        got = len(w.required) - len(missing)
        return Status(
            state="pending",
            description=f"waiting for {len(missing)} of {len(w.required)} required machines: {', '.join(missing)} "
            f"({got} reported)",
            settled=False,
        )
    if w.ready:
        return None
    if now >= deadline:
        return Status(
            state="error",
            description=f"no machine reported base and head within {_hours(window_s)}",
            settled=True,
        )
    return Status(state="pending", description="waiting for a machine to report base and head", settled=False)


def verdict_status(
    evaluation, policy: Policy, *, now: datetime, deadline: datetime, final: bool = False
) -> Status:
    """The status for a stored evaluation (``gate.domain.evaluations.EvaluationRecord``). ``final``: no more
    rounds are coming (a CI job that ended), so an undecided verdict is a failure now, not pending."""
    cells = evaluation.comparisons
    count = {d: sum(c.decision == d for c in cells) for d in Decision}
    n = len(cells)
    if evaluation.verdict == Verdict.APPROVE and count[Decision.ACCEPTED]:
        return Status(
            state="success",
            description=f"approve: {n - count[Decision.ACCEPTED]} of {n} cells within their margins, "
            f"{count[Decision.ACCEPTED]} accepted on record",
            settled=True,
        )
    if evaluation.verdict == Verdict.APPROVE:
        return Status(
            state="success", description=f"approve: all {n} cells within their margins", settled=True
        )
    if evaluation.verdict == Verdict.REJECT:
        return Status(
            state="failure",
            description=f"reject: {count['fail']} of {n} cells slower than their margin or failing",
            settled=True,
        )
    if evaluation.verdict == Verdict.INCONCLUSIVE:
        undecided = open_cells(cells, policy.max_rounds)
        if not undecided:
            return Status(
                state="failure",
                description=f"inconclusive after the round budget ({policy.max_rounds} processes): not a pass",
                settled=True,
            )
        if now >= deadline and not final:
            return Status(
                state="error",
                description=f"inconclusive: {len(undecided)} cells got no further rounds before the deadline",
                settled=True,
            )
        fewest = min(c.groups for c in undecided)
        return Status(
            state="failure" if final else "pending",
            description=f"inconclusive: {len(undecided)} cells need more rounds "
            f"(from {fewest} of at most {policy.max_rounds} processes)",
            settled=final,
        )
    first = next((c.reason for c in cells if c.decision == Decision.ERROR), None) or evaluation.reasons[-1]
    return Status(
        state="error", description=f"error: {count['error']} cells without data; {first}", settled=True
    )


def error_status(message: str) -> Status:
    return Status(state="error", description=message, settled=True)


def word_status(status: Status, evaluation=None) -> Status:
    """The non-required ``VERDICT_CONTEXT`` status beside ``status`` (the required one): its description leads
    with the verdict's word (``heading_word``), and an inconclusive verdict is pending, never red, so a reader
    tells "slower" (failure) from "needs more rounds" (pending) from "could not judge" (error)."""
    word = heading_word(status, evaluation)
    text = status.description
    if not text.startswith(word):
        text = f"{word}: {text}"
    state = {"approve": "success", "reject": "failure", "error": "error"}.get(word, "pending")
    return Status(state=state, description=text, settled=status.settled)


def _cell(c) -> str:
    parts = [c.task or "-"]
    if c.num_envs:
        parts.append(f"N={c.num_envs}")
    if c.threads:
        parts.append(f"{c.threads} thr")
    return " ".join(parts)


def _num(x: float | None, fmt: str) -> str:
    return "-" if x is None else format(x, fmt)


def _escape(text: str) -> str:
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
            f"| {_escape(c.machine)} | {c.kind} | {_cell(c)} | {c.impl or '-'} vs {c.baseline or '-'} | "
            f"{_num(c.ratio, '.3f')} | {ci} | {_num(c.cost_ratio, '.4f')} | {c.margin:.1%} | **{c.decision}** | "
            f"{c.signal} | {_escape(c.reason)} |"
        )
    if len(cells) > MAX_ROWS:
        rest = cells[MAX_ROWS:]
        passed = sum(c.decision == Decision.PASS for c in rest)
        lines.append(f"\n{len(rest)} more cells ({passed} pass) are in the full verdict.")
    return [*lines, "", *(f"- {_escape(r)}" for r in evaluation.reasons)]


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


def _wrap(text: str, indent: str = "") -> list[str]:
    return textwrap.wrap(text, WIDTH, subsequent_indent=indent, break_on_hyphens=False) or [""]


def summary_markdown(s: digest.VerdictSummary, *, site: str = "") -> tuple[list[str], list[str]]:
    """The summary's findings as markdown list items (each within ``WIDTH``), and their link definitions: one
    per finding whose worst row has a dashboard cell, when ``site`` (the service's URL) is set."""
    lines, links = [], []
    listed = s.listed
    for f in listed[:SHOWN]:
        text = f"- **{f.mark}** {_escape(f.what)} vs {_escape(f.against)}: {_escape(f.how_much)}"
        where = " · ".join(x for x in (f.where, f.then) if x)
        url = cell_link(site, f.worst) if site else ""
        if url:
            links.append(f"[{len(links) + 1}]: {url}")
            where += f" · [cell][{len(links)}]"
        lines += _wrap(text, "  ") + _wrap(f"  {_escape(where)}", "  ")
    if len(listed) > SHOWN:
        lines.append(f"- and {len(listed) - SHOWN} more: every row is below")
    if s.open_note:
        lines += _wrap(f"- **{digest.MARK[Decision.INCONCLUSIVE]}** {_escape(s.open_note)}", "  ")
    return lines, links


def accept_hint(evaluation, head_sha: str) -> list[str]:
    """How to accept a reject's first fail on record, as a command to copy; nothing when no fail can be."""
    if evaluation.verdict != Verdict.REJECT:
        return []
    fails = [
        c for c in evaluation.comparisons if c.decision == Decision.FAIL and c.kind not in acceptance.NEVER
    ]
    if not fails:
        return []
    command = acceptance.suggestion(fails[0], head_sha)
    return ["To accept a fail on record (write access), comment:", f"`{command}`"]


def answered_markdown(commands: Sequence[Answered]) -> list[str]:
    """The answers to the PR's ``/fusegate`` commands, one list item each."""
    lines = []
    for c in commands:
        for a in c.answers:
            who = f"[@{_escape(c.login)}]({c.url})" if c.url else f"@{_escape(c.login)}"
            lines += _wrap(f"- {who}: {_escape(str(a.get('text', '')))[:400]}", "  ")
    return lines


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
    lines = [heading, "", *_wrap(f"**{_escape(s.headline)}**"), ""]
    if notes:
        lines += [*notes, ""]
    lines += _wrap(" · ".join(x for x in (commits, s.counts) if x))
    if findings:
        lines += ["", *findings]
    if then:
        lines += ["", *then]
    tail = f"{digest.RATIO[0].upper()}{digest.RATIO[1:]}."
    lines += ["", *_wrap(tail + (f" [Full verdict]({link})" if link else ""))]
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


def heading_word(status: Status, evaluation) -> str:
    """The comment's heading: the verdict's word (approve / reject / inconclusive / error), as the terminal and
    the dashboard say it; before a verdict, waiting or error."""
    if evaluation is not None and evaluation.comparisons:
        return str(evaluation.verdict)
    return "error" if status.state == "error" else "waiting"


UNDECIDED_SHOWN = SHOWN  # undecided cells named in an inconclusive comment before "and N more"


def undecided_note(evaluation, *, ask: str = "") -> list[str]:
    """For an inconclusive verdict: which cells are undecided, what rounds would decide them (processes so far
    against the policy's ``max_rounds``: ``open_cells``) and how to ask for them (``ask``, markdown)."""
    if evaluation is None or evaluation.verdict != Verdict.INCONCLUSIVE:
        return []
    policy = judged_by(evaluation)
    budget = policy.max_rounds if policy else 0
    undecided = [c for c in evaluation.comparisons if c.decision == Decision.INCONCLUSIVE]
    can = open_cells(undecided, budget)
    if can:
        head = (
            f"**{len(can)} of {len(undecided)} undecided cells need more rounds**: more benchmark processes of "
            f"each, up to the policy's {budget} (`max_rounds`), decide them."
        )
    else:
        head = (
            f"**{len(undecided)} cells are undecided with the round budget spent** ({budget} processes each): "
            "more rounds cannot decide them; inconclusive is not a pass."
        )
    lines = _wrap(head)
    for c in (can or undecided)[:UNDECIDED_SHOWN]:
        vs = f"{c.impl} vs {c.baseline}" if c.impl else c.kind
        lines += _wrap(
            f"- {_escape(c.machine)} {c.kind} {_cell(c)} {_escape(vs)}: {c.groups} of {budget} processes",
            "  ",
        )
    rest = len(can or undecided) - UNDECIDED_SHOWN
    if rest > 0:
        lines.append(f"- and {rest} more (every row is below)")
    if can and ask:
        lines += ["", *_wrap(f"To ask for them: {ask}")]
    return lines


def comment(
    *,
    status: Status,
    base_sha: str,
    head_sha: str,
    base_ref: str,
    link: str,
    evaluation=None,
    policy_source: str = "",
    policy_edited: bool = False,
    site: str = "",
    judged_sha: str | None = None,
    ask: str = "",
    commands: Sequence[Answered] = (),
) -> str:
    """The PR comment: the hidden marker, the verdict's summary (or the status while there is none), the policy
    note, for an inconclusive verdict the undecided cells and how to ask for their rounds (``ask``), how to accept
    a reject's first fail and the answers to ``commands``, and every row collapsed. ``site``: the service's URL,
    for links to the findings' cells; ``judged_sha``: the head merged into the base, when the head is behind it
    (``gate.pair``)."""
    commits = f"base `{base_sha[:12]}` ({base_ref}) -> head `{head_sha[:12]}`"
    if judged_sha and judged_sha != head_sha:
        commits += f", judged merged into the base as `{judged_sha[:12]}`"
    note = []
    if policy_edited:
        note = _wrap(
            f"> This pull request edits `{POLICY_FILE}`. It is judged by the policy of the base commit "
            f"`{base_sha[:12]}`; the edited policy applies once it is merged.",
            "> ",
        )
    heading = f"### fusegate: {heading_word(status, evaluation)}"
    answered = answered_markdown(commands)
    if evaluation is not None and evaluation.comparisons:
        if status.state == "pending":  # the verdict so far, and what the check waits for
            commits += f" · {_escape(status.description)}"
        parts = [
            p for p in (undecided_note(evaluation, ask=ask), accept_hint(evaluation, head_sha), answered) if p
        ]
        then = [line for i, p in enumerate(parts) for line in ([""] if i else []) + p]
        return f"{MARKER}\n" + markdown(
            evaluation,
            heading=heading,
            commits=commits,
            site=site,
            link=link,
            notes=note,
            then=then,
        )
    lines = [MARKER, heading, "", *_wrap(f"**{_escape(status.description)}**"), "", commits]
    if policy_source:
        lines += _wrap(f"policy: {policy_source}")
    if note:
        lines += ["", *note]
    if answered:
        lines += ["", *answered]
    lines += ["", f"[Full verdict]({link})"]
    return "\n".join(lines) + "\n"
