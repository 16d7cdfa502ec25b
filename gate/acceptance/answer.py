"""Answering a comment's commands against a verdict's rows and a permission lookup (``gate.acceptance``), and
the same over a pull request's comments as GitHub's API lists them."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime

from gate.acceptance.command import Command, CommandError, cell_text, commands, key
from gate.acceptance.rule import NEVER, newest, worse
from gate.domain.evaluations import Acceptance, Cell, ComparisonRecord
from gate.domain.vocabulary import Decision

ALLOWED = ("admin", "maintain", "write")  # the repository permissions that may accept
_SHOWN = 5  # cells named in an answer before "and N more"


@dataclass(frozen=True, kw_only=True)
class Comment:
    """A pull request comment with a command: who wrote it, when, and the head it is for (None: only the commands
    that name their head apply)."""

    id: int | None
    login: str
    body: str
    url: str
    at: datetime
    head_sha: str | None = None


@dataclass(frozen=True, kw_only=True)
class Answer:
    """What the bot says to one command: accepted (with the acceptances it recorded) or why not."""

    login: str
    command: str
    text: str
    url: str = ""
    acceptances: tuple[Acceptance, ...] = ()
    other_head: bool = False  # the command is for another head than the verdict's

    @property
    def ok(self) -> bool:
        return bool(self.acceptances)


def _listed(cells: Sequence[str]) -> str:
    text = ", ".join(f"`{c}`" for c in cells[:_SHOWN])
    return text + (f" and {len(cells) - _SHOWN} more" if len(cells) > _SHOWN else "")


def handle(
    comment: Comment,
    *,
    repo: str,
    number: int,
    head_sha: str,
    rows: Sequence[ComparisonRecord] | None,
    permission: Callable[[str], str],
    accepted: Sequence[Acceptance] = (),
    at: datetime | None = None,
) -> list[Answer]:
    """The answers to one comment's commands against the verdict of ``head_sha`` (its ``rows``; None: no verdict
    yet). ``permission(login)`` is the user's permission on the repository (asked once, only when a command is
    well formed); ``accepted`` is what is on record for the head already; ``at`` stamps new acceptances (the
    comment's time by default)."""
    answers: list[Answer] = []
    on_record = list(accepted)
    level: str | None = None  # asked once, for the first well-formed command for this head
    for cmd in commands(comment.body):
        say = lambda text, cmd=cmd, **kw: Answer(  # noqa: E731
            login=comment.login,
            command=cmd.line if isinstance(cmd, Command) else "",
            text=text,
            url=comment.url,
            **kw,
        )
        if isinstance(cmd, CommandError):
            answers.append(say(f"not read: {cmd}"))
            continue
        target = cmd.head or comment.head_sha
        if target is None or not head_sha.startswith(target):
            where = f"head {target[:12]}" if target else "no head"
            answers.append(
                say(
                    f"not for this verdict: it names {where}, the verdict is of head {head_sha[:12]}",
                    other_head=True,
                )
            )
            continue
        if level is None:
            level = permission(comment.login) or "none"
        if level not in ALLOWED:
            answers.append(
                say(
                    f"not accepted: @{comment.login} has {level} permission on {repo}; accepting a regression "
                    f"needs {', '.join(ALLOWED[::-1])}"
                )
            )
            continue
        if rows is None:
            answers.append(
                say(f"not accepted: head {head_sha[:12]} has no verdict yet; accept once the row fails")
            )
            continue
        text, new = _resolve(cmd, rows, on_record, comment, repo, number, head_sha, at or comment.at)
        on_record += new
        answers.append(say(text, acceptances=tuple(new)))
    return answers


def _resolve(cmd, rows, on_record, comment, repo, number, head_sha, at) -> tuple[str, list[Acceptance]]:
    fits = [r for r in rows if cmd.spec.fits(r)]
    never = [
        r for r in fits if (r.kind in NEVER or r.decision == Decision.ERROR) and r.decision != Decision.PASS
    ]
    if never:
        r = never[0]
        return (
            f"not accepted: `{cell_text(r)}` is a {r.kind} row that is {r.decision}; correctness, parity, "
            "meter and machine rows and errors are never accepted: fix what it says",
            [],
        )
    by = newest(on_record)
    fails = [
        r for r in fits if r.decision == Decision.FAIL and not (key(r) in by and not worse(by[key(r)], r))
    ]
    if not fails:
        if not fits:
            failing = sorted(
                {cell_text(r) for r in rows if r.decision == Decision.FAIL and r.kind not in NEVER}
            )
            known = f"the failing cells are {_listed(failing)}" if failing else "no row fails"
            return f"not accepted: no row is the cell `{cmd.spec}`; {known}", []
        done = [by[key(r)] for r in fits if key(r) in by]
        if done:
            return f"already accepted by @{done[0].login}: `{cmd.spec}`", []
        decisions = sorted({str(r.decision) for r in fits})
        return (
            f"not accepted: `{cmd.spec}` does not fail ({', '.join(decisions)}); only a fail is accepted",
            [],
        )
    cells = sorted({(r.task, r.impl, r.num_envs or 0, r.threads or 0) for r in fails})
    if len(cells) > 1:
        names = sorted({cell_text(r, short=True) for r in fails})
        return (
            f"not accepted: `{cmd.spec}` names {len(cells)} failing cells, {_listed(names)}: add N= and threads=",
            [],
        )
    groups: dict[Cell, list] = {}
    for r in fails:
        groups.setdefault(key(r), []).append(r)
    new = [
        Acceptance(
            repo=repo,
            number=number,
            head_sha=head_sha,
            **asdict(k),
            login=comment.login,
            reason=cmd.reason,
            accepted_at=at,
            comment_id=comment.id,
            comment_url=comment.url,
            ratio=_most(r.ratio for r in group),
            high=_most(r.high for r in group),
            cost_ratio=_most(r.cost_ratio for r in group),
        )
        for k, group in groups.items()
    ]
    worst = max(fails, key=lambda r: r.ratio or 0.0)
    figure = f" (time {worst.ratio:.3f}, up to {worst.high:.3f})" if worst.high is not None else ""
    kinds = ", ".join(sorted({str(r.kind) for r in fails}))
    return (
        f"accepted on record: `{cell_text(worst, short=True)}`{figure}, {len(fails)} failing row(s) ({kinds}) "
        f"for head {head_sha[:12]}, by @{comment.login}: {cmd.reason}",
        new,
    )


def _most(values: Iterable[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return max(present) if present else None


@dataclass(frozen=True, kw_only=True)
class Handled:
    acceptances: list[Acceptance] = field(default_factory=list)
    answers: list[Answer] = field(default_factory=list)


def _time(stamp: object) -> datetime | None:
    if not isinstance(stamp, str):
        return None
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None


def from_comments(
    comments: Iterable[Mapping],
    *,
    repo: str,
    number: int,
    head_sha: str,
    rows: Sequence[ComparisonRecord] | None,
    permission: Callable[[str], str],
    since: datetime | None = None,
    ignore: Iterable[str] = (),
    accepted: Sequence[Acceptance] = (),
) -> Handled:
    """The acceptances for ``head_sha`` in a pull request's comments, as ``GET /repos/{repo}/issues/{number}/
    comments`` lists them (oldest first), and the answers to their commands. A command applies when it names the
    head (``@<sha>``) or, with ``since`` (when the head was pushed), when its comment was written since then;
    commands for other heads are left out. Comments of bots and of ``ignore`` (the judge's own login) are never
    read. ``permission(login)`` is asked at most once per user (``GET /repos/{repo}/collaborators/{user}/
    permission``: ``role_name``)."""
    asked: dict[str, str] = {}

    def lookup(login: str) -> str:
        if login not in asked:
            asked[login] = permission(login)
        return asked[login]

    skip = set(ignore)
    out = Handled(acceptances=[], answers=[])
    for c in comments:
        user = c.get("user") or {}
        login = str(user.get("login") or "")
        if not login or login in skip or user.get("type") == "Bot":
            continue
        at = _time(c.get("updated_at")) or _time(c.get("created_at"))
        if at is None:
            continue
        comment = Comment(
            id=c.get("id") if isinstance(c.get("id"), int) else None,
            login=login,
            body=str(c.get("body") or ""),
            url=str(c.get("html_url") or ""),
            at=at,
            head_sha=head_sha if since is not None and at >= since else None,
        )
        answers = handle(
            comment,
            repo=repo,
            number=number,
            head_sha=head_sha,
            rows=rows,
            permission=lookup,
            accepted=[*accepted, *out.acceptances],
        )
        for a in answers:
            if not a.other_head:
                out.answers.append(a)
                out.acceptances.extend(a.acceptances)
    return out
