"""A regression accepted on record: the PR comment command, who may give it, and what it does to a row.

A maintainer comments on the pull request, one command a line::

    /fusegate accept [machine] [kind] <task> <impl> [N=<n>] [threads=<t>] [@<head sha>] -- <reason>

The cell is a row's identity as the verdict comment and the terminal print it: ``g1_walk assembled N=4096
threads=2`` (``2 thr``, ``2thr`` and ``num_envs=`` are read too; ``vs <baseline>`` narrows to rows against it).
Machine and kind may be left out: the command then accepts the cell's failing rows on every machine and of every
kind (a slower kernel fails its implementation-vs-baseline, best-thread and head-vs-base rows together); N and
threads may be left out when one failing cell fits the rest. ``@<sha>`` names the head the acceptance is for
(the comment's copyable command carries it); without it, the head the pull request had when the comment arrived.
The reason after `` -- `` is required.

Only a user with write, maintain or admin permission on the repository may accept. An acceptance holds for one
pull request's head commit: a new push needs a new one. A row of the accepted cell that fails is ``accepted``
(not counted as a fail) while it is no worse than when accepted: its time interval's lower bound at or below the
accepted upper bound, and its cost ratio at most the row's margin above the accepted one. Worse, it fails again.
Correctness, meter and machine rows and errors are never accepted.

Pure functions: ``commands`` parses a comment, ``handle`` answers one comment's commands given the verdict's rows
and a permission lookup, ``from_comments`` does that over a pull request's comments as GitHub's API lists them
(for a judge without the bot's store), ``judged`` says what becomes of a row.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

from gate.domain import MACHINE_NAME_PATTERN, Acceptance, ComparisonRecord, Decision, Kind

PREFIX = "/fusegate"
ALLOWED = ("admin", "maintain", "write")  # the repository permissions that may accept
NEVER = frozenset({Kind.CORRECTNESS, Kind.METER, Kind.MACHINE})  # rows no acceptance can pass
SYNTAX = "/fusegate accept [machine] [kind] <task> <impl> [N=<n>] [threads=<t>] [@<head sha>] -- <reason>"
MAX_REASON = 500
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
_MACHINE = re.compile(MACHINE_NAME_PATTERN)
_SHA = re.compile(r"^[0-9a-f]{7,40}$")
_THREADS = re.compile(r"^([0-9]+)(thr|threads)$")
_KEYS = {"machine", "kind", "task", "impl", "n", "num_envs", "threads", "thr", "baseline", "vs"}
_SHOWN = 5  # cells named in an answer before "and N more"


class CommandError(ValueError):
    """A command the bot cannot read: what was wrong and the syntax it reads."""


@dataclass(frozen=True, kw_only=True)
class Spec:
    """A cell as a command names it: the fields it leaves out match any row."""

    task: str
    impl: str
    machine: str | None = None
    kind: Kind | None = None
    num_envs: int | None = None
    threads: int | None = None
    baseline: str | None = None

    def fits(self, row) -> bool:
        named = {
            "machine": self.machine,
            "kind": self.kind,
            "task": self.task,
            "impl": self.impl,
            "num_envs": self.num_envs,
            "threads": self.threads,
            "baseline": self.baseline,
        }
        return all(v is None or getattr(row, k) == v for k, v in named.items())

    def __str__(self) -> str:
        parts = [self.machine, self.kind, self.task, self.impl]
        parts += [
            f"N={self.num_envs}" if self.num_envs else None,
            f"threads={self.threads}" if self.threads else None,
        ]
        parts += [f"vs {self.baseline}" if self.baseline else None]
        return " ".join(str(p) for p in parts if p)


@dataclass(frozen=True, kw_only=True)
class Command:
    line: str
    spec: Spec
    reason: str
    head: str | None = None  # the head sha (a prefix of 7-40 hex digits) it names, if it names one


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


def key(row) -> tuple:
    """The identity an acceptance holds for: a row's machine, kind, task, impl, N and threads (every placement)."""
    return (row.machine, row.kind, row.task, row.impl, row.num_envs, row.threads)


def cell_text(row, *, short: bool = False) -> str:
    """A row's cell as a command names it; ``short`` leaves out machine and kind (every machine, every kind)."""
    parts = [] if short else [row.machine, str(row.kind)]
    parts += [row.task, row.impl]
    parts += [f"N={row.num_envs}"] if row.num_envs else []
    parts += [f"threads={row.threads}"] if row.threads else []
    return " ".join(parts)


def suggestion(row, head_sha: str) -> str:
    """The command that accepts ``row``'s cell on ``head_sha``, to copy (the reason left to write)."""
    return f"{PREFIX} accept {cell_text(row, short=True)} @{head_sha[:12]} -- <why>"


# --- parsing --------------------------------------------------------------------------------------------------


def commands(body: str) -> list[Command | CommandError]:
    """Every ``/fusegate`` command of a comment, one a line, parsed or the error that says why not. Lines in
    fenced code blocks and quoted lines are not commands."""
    out: list[Command | CommandError] = []
    fenced = False
    for raw in (body or "").splitlines():
        line = raw.strip()
        if line.startswith(("```", "~~~")):
            fenced = not fenced
            continue
        if fenced or not _is_command(line):
            continue
        try:
            out.append(parse(line))
        except CommandError as exc:
            out.append(exc)
    return out


def _is_command(line: str) -> bool:
    head = line[: len(PREFIX) + 1].lower()
    return head == PREFIX or (head.startswith(PREFIX) and head[len(PREFIX)].isspace())


def parse(line: str) -> Command:
    """One command line; ``CommandError`` says what is wrong with it."""
    line = line.strip().replace("\x00", "")
    if not _is_command(line):
        raise CommandError(f"a command starts with {PREFIX}: {SYNTAX}")
    words = line[len(PREFIX) :].split(None, 1)
    if not words:
        raise CommandError(f"{PREFIX} alone says nothing: {SYNTAX}")
    if words[0].lower() != "accept":
        raise CommandError(f"unknown command {words[0][:40]!r}: the bot knows {SYNTAX}")
    rest = words[1] if len(words) > 1 else ""
    cell, dashes, reason = _split(rest)
    reason = " ".join(reason.split())
    if not dashes or not reason:
        raise CommandError(f"a reason is required after ' -- ': {SYNTAX}")
    if len(reason) > MAX_REASON:
        raise CommandError(f"the reason has {len(reason)} characters; at most {MAX_REASON}")
    spec, head = _cell(cell.replace("`", " ").split())
    return Command(line=line[:300], spec=spec, reason=reason, head=head)


def _split(rest: str) -> tuple[str, str, str]:
    """(cell, "--" or "", reason) at the first ``--`` standing alone."""
    m = re.search(r"(?:^|\s)--(?:\s|$)", rest)
    if m is None:
        return rest, "", ""
    return rest[: m.start()], "--", rest[m.end() :]


def _number(name: str, value: str) -> int:
    if not value.isdigit() or not 1 <= int(value) <= 2**31 - 1:
        raise CommandError(f"{name} must be a positive whole number, got {value[:20]!r}")
    return int(value)


def _cell(tokens: list[str]) -> tuple[Spec, str | None]:
    named: dict[str, object] = {}
    bare: list[str] = []

    def put(name: str, value: object) -> None:
        if name in named:
            raise CommandError(f"{name} is named twice: {SYNTAX}")
        named[name] = value

    i = 0
    while i < len(tokens):
        t, nxt = tokens[i], tokens[i + 1] if i + 1 < len(tokens) else ""
        i += 1
        if t.startswith("@"):
            if not _SHA.fullmatch(t[1:].lower()):
                raise CommandError(f"{t[:48]!r} is not a head commit: @ and 7-40 hex digits of its SHA")
            put("head", t[1:].lower())
        elif "=" in t:
            name, _, value = t.partition("=")
            name = name.lower()
            if name not in _KEYS:
                raise CommandError(
                    f"unknown field {name[:20]!r}: machine=, kind=, task=, impl=, N=, threads="
                )
            if name in ("n", "num_envs"):
                put("num_envs", _number("N", value))
            elif name in ("threads", "thr"):
                put("threads", _number("threads", value))
            elif name == "kind":
                put("kind", _kind(value))
            else:
                put("baseline" if name == "vs" else name, value)
        elif m := _THREADS.fullmatch(t.lower()):
            put("threads", _number("threads", m.group(1)))
        elif t.isdigit() and nxt.lower() in ("thr", "threads"):
            put("threads", _number("threads", t))
            i += 1
        elif t.lower() == "vs":
            if not nxt:
                raise CommandError(f"'vs' needs the baseline after it: {SYNTAX}")
            put("baseline", nxt)
            i += 1
        elif t in set(Kind):
            put("kind", Kind(t))
        else:
            bare.append(t)
    slots = [s for s in ("machine", "task", "impl") if s not in named]
    if bare and len(bare) == len(slots):
        named.update(zip(slots, bare, strict=True))
    elif bare and len(bare) == len(slots) - 1 and "machine" in slots:
        named.update(zip([s for s in slots if s != "machine"], bare, strict=True))
    elif bare or "task" not in named or "impl" not in named:
        got = " ".join(tokens)[:120] or "nothing"
        raise CommandError(
            f"name the cell as [machine] [kind] <task> <impl> [N=<n>] [threads=<t>]; got {got!r}"
        )
    for name in ("task", "impl", "baseline"):
        if name in named and not _NAME.fullmatch(str(named[name])):
            raise CommandError(f"{name} {str(named[name])[:40]!r} is not a name of a task or implementation")
    if "machine" in named and not _MACHINE.fullmatch(str(named["machine"])):
        raise CommandError(f"machine {str(named['machine'])[:40]!r} is not a machine name")
    head = named.pop("head", None)
    return Spec(**named), head


def _kind(value: str) -> Kind:
    try:
        return Kind(value)
    except ValueError:
        raise CommandError(f"unknown kind {value[:40]!r}: one of {', '.join(Kind)}") from None


# --- answering a comment -------------------------------------------------------------------------------------


def newest(acceptances: Iterable[Acceptance]) -> dict[tuple, Acceptance]:
    """The acceptance that holds per cell: the newest of each (a fail worse than accepted can be accepted again)."""
    out: dict[tuple, Acceptance] = {}
    for a in sorted(acceptances, key=lambda a: a.accepted_at):
        out[key(a)] = a
    return out


def worse(a: Acceptance, row) -> bool:
    """Whether ``row`` is worse than when ``a`` accepted it: its time interval wholly above the accepted upper
    bound, or its cost ratio above the accepted one by more than the row's margin."""
    if a.high is not None and row.low is not None and row.low > a.high:
        return True
    return (
        a.cost_ratio is not None
        and row.cost_ratio is not None
        and row.cost_ratio > a.cost_ratio * (1 + row.margin)
    )


def judged(row, by: Mapping[tuple, Acceptance]) -> tuple[Acceptance | None, bool]:
    """(the acceptance of a failing row's cell, whether the row is worse than it); (None, False) for a row that
    does not fail, is never accepted, or has no acceptance."""
    if row.decision != Decision.FAIL or row.kind in NEVER:
        return None, False
    a = by.get(key(row))
    return a, a is not None and worse(a, row)


def accepted_text(a: Acceptance) -> str:
    return f"accepted on record by @{a.login} for head {a.head_sha[:12]}: {a.reason}"


def worse_text(a: Acceptance) -> str:
    then = f"time up to {a.high:.3f}" if a.high is not None else ""
    then += (", " if then else "") + (f"cost {a.cost_ratio:.4f}" if a.cost_ratio is not None else "")
    return (
        f"worse than accepted by @{a.login} ({then or 'no figure'}): a fail again; accept it again "
        "at its new figure, or fix it"
    )


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
    allowed: bool | None = None
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
        if allowed is None:
            level = permission(comment.login)
            allowed = level in ALLOWED
            refusal = (
                f"not accepted: @{comment.login} has {level or 'no'} permission on {repo}; accepting a regression "
                f"needs {', '.join(ALLOWED[::-1])}"
            )
        if not allowed:
            answers.append(say(refusal))
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
    groups: dict[tuple, list] = {}
    for r in fails:
        groups.setdefault(key(r), []).append(r)
    new = [
        Acceptance(
            repo=repo,
            number=number,
            head_sha=head_sha,
            machine=k[0],
            kind=k[1],
            task=k[2],
            impl=k[3],
            num_envs=k[4],
            threads=k[5],
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


def counted(a: Acceptance, *, accepted: int, worse: int) -> Acceptance:
    """``a`` as an evaluation keeps it: with how many of its rows it accepted and how many were worse."""
    return replace(a, accepted=accepted, worse=worse)
