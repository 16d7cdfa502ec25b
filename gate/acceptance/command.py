"""The ``/fusegate accept`` command: a cell, a reason and maybe a head, read from a comment's lines, and a row's
cell as a command names it (``gate.acceptance``)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from gate.domain.evaluations import Cell
from gate.domain.machines import MACHINE_NAME_PATTERN
from gate.domain.vocabulary import Kind

PREFIX = "/fusegate"
SYNTAX = "/fusegate accept [machine] [kind] <task> <impl> [N=<n>] [threads=<t>] [@<head sha>] -- <reason>"
MAX_REASON = 500
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
_MACHINE = re.compile(MACHINE_NAME_PATTERN)
_SHA = re.compile(r"^[0-9a-f]{7,40}$")
_THREADS = re.compile(r"^([0-9]+)(thr|threads)$")
_KEYS = {"machine", "kind", "task", "impl", "n", "num_envs", "threads", "thr", "baseline", "vs"}


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


def key(row) -> Cell:
    """The identity an acceptance holds for: a row's machine, kind, task, impl, N and threads (every placement)."""
    return Cell.of(row)


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
