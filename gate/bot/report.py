"""What the bot tells GitHub, as pure functions: the commit status of a check and the PR comment's markdown.

The comment and a CI job's step summary render the same verdict summary (``gate.evaluate.summary``) in markdown
that fits a narrow column (``gate.bot.rendering``): the verdict word as the heading, the headline, the commits and
the counts, one line per finding with reference-style links to its dashboard cell, then every row collapsed.

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

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from gate import acceptance
from gate.bot.rendering import SHOWN, markdown
from gate.bot.rendering import cell as _cell
from gate.bot.rendering import escape as _escape
from gate.bot.rendering import wrap as _wrap
from gate.domain.vocabulary import Decision, Verdict
from gate.evaluate.reads import open_cells
from gate.policy import POLICY_FILE, Policy, judged_by

CONTEXT = "fusegate"  # the required commit status, the same from the service's bot and the hosted judge
VERDICT_CONTEXT = "fusegate/verdict"  # not required: reject, inconclusive and error told apart
MARKER = "<!-- fusegate:pr-comment -->"  # the bot's one comment per pull request is found by this


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
