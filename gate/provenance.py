"""Which files are the subject and which the meter, and the content id of each side of a tree.

The **subject** is what a pull request is judged on: the directories a repository declares (``gate.subject``:
its ``[tool.fusegate]`` table; here ``kernels/``: the tasks, their reference, hand-written and assembled kernels,
plans, the collector's own code) and the dependency pins it runs with. The **meter** is what runs, times, counts,
checks and records it: ``gate/meter/``, the asv suites in ``benchmarks/``, ``asv.conf.json``, the sidecar
records, the declaration itself, and the parts of each task that measure it, which live in the subject's
directories but are read from the base like the rest of the meter: every task's ``meter.py`` (its snapshots,
tolerances and cost weights) and the shared snapshot helpers ``kernels/synthetic.py``. The gate measures a
head's subject with its base's meter, so a change cannot measure itself.

An id is the sha256 of (path, git blob id) of every file of the side, sorted: the same whether it is computed
from a git tree (``git ls-tree``) or from files on disk (``blob_id``), and it changes with content only. The
declaration counts on the meter's side as its content (``TABLE``), wherever it is written (pyproject.toml or
fusegate.toml). A tree that declares no subject (a commit from before the declaration) is read as this repository
was then (``UNDECLARED``), so its ids are the ones its runs recorded. The id of each kernel, the part of the
subject it runs, is ``gate.provenance_kernels``'s.
Standard library only: the benchmark processes compute the ids of the tree they run in.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path

from gate import subject as declared

# Files of the meter in every tree (those inside the subject's directories are read from the base).
METER_FILES = (
    "asv.conf.json",
    "gate/sidecar.py",
    "gate/provenance.py",
    "gate/provenance_kernels.py",
    "gate/subject.py",
    "kernels/synthetic.py",
)
METER_DIRS = ("gate/meter/", "benchmarks/")
TASK_METER = "meter.py"  # in each task's package: the task's part of the meter
# What the subject runs with: the dependency pins of pyproject.toml (a change of them is measured, never reused;
# the rest of that file, tool settings, is neither side, but for the declaration, which is the meter's).
PINS = "pyproject.toml"
DECLARATION = declared.FILE  # the declaration's own file (else it is a table of pyproject.toml)
# The declaration's entry among the meter's files, and its name in a list of changes.
TABLE = "[tool.fusegate]"
SUFFIXES = (".py",)  # inside the directories, what is imported
# A team's repository pins the fusegate that measures it: that requirement is meter, not subject (the base's pin
# measures both sides; a head that changes it changes the meter). This repository is fusegate and names none.
METER_DISTRIBUTION = "fusegate"

MANIFEST = (
    "fusegate-measure.json"  # written into a measurement tree: what it is made of (``gate.runner.trees``)
)


@dataclass(frozen=True, kw_only=True)
class Layout:
    """Where a tree's subject and meter are, from its declaration (``layout``)."""

    dirs: tuple[str, ...]  # the subject's directories
    tasks_dir: str | None = None  # the tasks package's directory: its ``<task>/meter.py`` are the meter's
    meter_files: tuple[str, ...] = METER_FILES
    table: str | None = None  # the declaration's content (a meter entry); None: the tree declares none
    declaration: declared.Subject | None = None

    def is_meter(self, path: str) -> bool:
        return (
            path in self.meter_files
            or (path.startswith(METER_DIRS) and path.endswith(SUFFIXES))
            or self._task_meter(path)
        )

    def is_subject(self, path: str) -> bool:
        return path.startswith(self.dirs) and path.endswith(SUFFIXES) and not self.is_meter(path)

    def _task_meter(self, path: str) -> bool:
        if self.tasks_dir is None or not path.startswith(self.tasks_dir + "/"):
            return False
        return path[len(self.tasks_dir) + 1 :].split("/")[1:] == [TASK_METER]

    def entries(self) -> list[tuple[str, str]]:
        """The declaration's entry among the meter's (path, blob id) pairs (none when the tree declares none)."""
        return [] if self.table is None else [(TABLE, blob_id(self.table.encode()))]


# A tree without a declaration (``gate.subject.UNDECLARED``): its directories, and its tolerances were a file of
# the reference then.
UNDECLARED = Layout(
    dirs=declared.UNDECLARED.dirs, meter_files=(*METER_FILES, "kernels/reference/tolerance.py")
)


def layout(pyproject: bytes | str | None, fusegate_toml: bytes | str | None = None) -> Layout:
    """The layout a tree's ``pyproject.toml`` and ``fusegate.toml`` texts declare (None: absent). Never raises: a
    declaration that cannot be read is the undeclared layout with a meter entry saying so (a head that breaks its
    declaration changes the meter, and is measured with its base's)."""
    try:
        found = declared.of_texts(pyproject, fusegate_toml)
    except declared.SubjectError as exc:
        return replace(UNDECLARED, table=f"(unreadable: {exc})")
    if found is declared.UNDECLARED:
        return UNDECLARED
    return Layout(
        dirs=found.dirs,
        tasks_dir=found.tasks_dir,
        table=json.dumps(found.table(), sort_keys=True),
        declaration=found,
    )


def on_disk(root: Path) -> Layout:
    """The layout the tree at ``root`` declares."""
    root = Path(root)
    texts = [
        (root / name).read_bytes() if (root / name).is_file() else None for name in (PINS, declared.FILE)
    ]
    return layout(*texts)


def meter_changes(changed: Iterable[str], base: Layout, head: Layout) -> tuple[str, ...]:
    """The meter's files among ``changed`` (paths that differ between two commits), by either commit's layout,
    and ``TABLE`` when their declarations differ."""
    paths = [p for p in changed if base.is_meter(p) or head.is_meter(p)]
    return (*paths, *([TABLE] if base.table != head.table else []))


def dependencies(pyproject: bytes | str | None) -> list[str]:
    """``[project].dependencies`` of a pyproject.toml's text as written (absent: none; unreadable: a marker)."""
    import tomllib

    if isinstance(pyproject, bytes):
        try:
            pyproject = pyproject.decode()
        except UnicodeDecodeError:
            return [UNREADABLE]
    try:
        return list(tomllib.loads(pyproject).get("project", {}).get("dependencies", [])) if pyproject else []
    except tomllib.TOMLDecodeError:
        return [UNREADABLE]


UNREADABLE = "(unreadable pyproject.toml)"


def pins_id(pyproject: bytes | None) -> str:
    """The id of ``[project].dependencies`` in a pyproject.toml's text (absent: of nothing), the fusegate pin
    (``meter_pin``) aside."""
    import json

    pins = [r for r in dependencies(pyproject) if requirement_name(r) != METER_DISTRIBUTION]
    return blob_id(json.dumps(sorted(pins)).encode())


def meter_pin(pyproject: bytes | str | None) -> str | None:
    """The requirement on fusegate in a pyproject.toml's ``[project].dependencies`` (a team's repository: the
    meter that measures it), or None."""
    found = [r.strip() for r in dependencies(pyproject) if requirement_name(r) == METER_DISTRIBUTION]
    return " | ".join(sorted(found)) or None


def meter_pin_changes(base: bytes | str | None, head: bytes | str | None) -> tuple[str, ...]:
    """``pyproject.toml (fusegate==A -> fusegate==B)`` when the head pins another fusegate than the base (a meter
    change, listed with the meter's files), else nothing."""
    old, new = meter_pin(base), meter_pin(head)
    if _same_form(old) == _same_form(new):
        return ()
    return (f"{PINS} ({old or 'no fusegate pin'} -> {new or 'no fusegate pin'})",)


@dataclass(frozen=True)
class PinChange:
    """One dependency whose requirement differs between two pyproject.toml files (None: absent from one)."""

    name: str  # the distribution's normalized name (PEP 503)
    old: str | None  # the requirement as the base writes it
    new: str | None  # as the head writes it

    @property
    def pinned(self) -> str | None:
        """The version the head pins exactly (``name==version``), else None."""
        return _exact(self.new) if self.new else None

    def describe(self) -> str:
        """``numba 0.68.1 -> 0.69.0``; ``+name==1`` added, ``-name==1`` removed, else both requirements."""
        if self.old is None:
            return f"+{self.new}"
        if self.new is None:
            return f"-{self.old}"
        old, new = _exact(self.old), _exact(self.new)
        if old and new:
            return f"{self.name} {old} -> {new}"
        return f"{self.old} -> {self.new}"


_NAME = re.compile(r"^\s*([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)")


def requirement_name(requirement: str) -> str:
    """The normalized distribution name a PEP 508 requirement starts with (``Psycopg[binary]==3`` -> psycopg)."""
    found = _NAME.match(requirement)
    return re.sub(r"[-_.]+", "-", found.group(1)).lower() if found else requirement.strip()


def _exact(requirement: str) -> str | None:
    """The version of a plain ``name==version`` requirement (extras allowed, no marker), else None."""
    found = re.fullmatch(r"[^=<>!~;@\s]+\s*==\s*([^\s,;*]+)", requirement.strip())
    return found.group(1) if found else None


def pin_changes(base: bytes | str | None, head: bytes | str | None) -> tuple[PinChange, ...]:
    """How the head's ``[project].dependencies`` differ from the base's, by distribution (sorted by name): the
    order of the list, the spacing inside a requirement and the rest of the file do not count."""
    ours, theirs = _by_name(dependencies(base)), _by_name(dependencies(head))
    return tuple(
        PinChange(name, ours.get(name), theirs.get(name))
        for name in sorted(
            (ours.keys() | theirs.keys()) - {METER_DISTRIBUTION}
        )  # the meter: meter_pin_changes
        if _same_form(ours.get(name)) != _same_form(theirs.get(name))
    )


def _by_name(requirements: list[str]) -> dict[str, str]:
    """name -> its requirement (a name listed twice, e.g. under two markers: both, sorted, joined by " | ")."""
    out: dict[str, list[str]] = {}
    for r in requirements:
        out.setdefault(requirement_name(r), []).append(r.strip())
    return {name: " | ".join(sorted(found)) for name, found in out.items()}


def _same_form(requirement: str | None) -> str | None:
    """A requirement as compared: its name normalized, the rest without spaces (`` | `` joins alternatives)."""
    if requirement is None:
        return None
    parts = []
    for one in requirement.split(" | "):
        found = _NAME.match(one)
        rest = one[found.end() :] if found else one
        parts.append(requirement_name(one) + "".join(rest.split()))
    return " | ".join(sorted(parts))


def blob_id(data: bytes) -> str:
    """git's id of a file's content (``git hash-object``)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def content_id(entries: Iterable[tuple[str, str]]) -> str:
    """The id of a side: (path, blob id) pairs, in any order."""
    digest = hashlib.sha256()
    for path, blob in sorted(entries):
        digest.update(f"{path}\0{blob}\n".encode())
    return digest.hexdigest()[:16]


def ids(
    entries: Iterable[tuple[str, str]],
    pyproject: bytes | None,
    where: Layout | None = None,
    *,
    pin: str | None = None,
) -> dict[str, str]:
    """{"subject": id, "meter": id} from (path, blob id) of a tree's files, its pyproject.toml's text and the
    layout it declares (default: the one its pyproject.toml declares); the meter's includes its fusegate pin
    (``meter_pin``; ``pin`` in its place, when given)."""
    where = layout(pyproject) if where is None else where
    entries = list(entries)
    subject = [(f, b) for f, b in entries if where.is_subject(f)] + [
        (f"{PINS}#dependencies", pins_id(pyproject))
    ]
    meter = [(f, b) for f, b in entries if where.is_meter(f)] + where.entries()
    pin = meter_pin(pyproject) and (pin or meter_pin(pyproject))
    meter += [(f"{PINS}#{METER_DISTRIBUTION}", blob_id(_same_form(pin).encode()))] if pin else []
    return {"subject": content_id(subject), "meter": content_id(meter)}


def ids_on_disk(root: Path) -> dict[str, str]:
    """The ids of the tree at ``root`` as it is on disk (tracked or not: what its processes import). A tree that
    pins fusegate is measured by the fusegate that runs: its meter's id names that one (``running_pin``), the
    same as its base's when it is the version the base pins."""
    root = Path(root)
    where = on_disk(root)
    files = files_under(root, {*where.dirs, *METER_DIRS}) | {
        f for f in where.meter_files if (root / f).is_file()
    }
    return ids(
        ((f, blob_id((root / f).read_bytes())) for f in files), pins_text(root), where, pin=running_pin()
    )


def running_pin() -> str:
    """``fusegate==VERSION`` of the fusegate that runs (its installed distribution's version)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"{METER_DISTRIBUTION}=={version(METER_DISTRIBUTION)}"
    except PackageNotFoundError:
        return f"{METER_DISTRIBUTION} (not installed)"


def files_under(root: Path, dirs: Iterable[str]) -> set[str]:
    """The repository paths of the files under ``dirs`` of the tree at ``root`` (no ``__pycache__``)."""
    return {
        p.relative_to(root).as_posix()
        for d in dirs
        for p in (root / d).rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }


def pins_text(root: Path) -> bytes | None:
    """The text of the tree's pyproject.toml (None: it has none)."""
    pins = root / PINS
    return pins.read_bytes() if pins.is_file() else None


def of_commit(
    files: Iterable[tuple[str, str]], pyproject: str | None, fusegate_toml: str | None = None
) -> dict[str, str]:
    """The ids of a commit, from ``gate.git.files`` and the texts of its pyproject.toml and fusegate.toml
    (``gate.git.show``; None: absent)."""
    pins = None if pyproject is None else pyproject.encode()
    return ids(files, pins, layout(pins, fusegate_toml))


def meter_root() -> Path:
    """The checkout (or source install) of the fusegate that runs: the directory holding its ``gate/``, its asv
    suites and its ``asv.conf.json``."""
    return Path(__file__).resolve().parents[1]


def holds_meter(tree: Path) -> bool:
    """Whether the tree at ``tree`` holds fusegate's meter itself (this repository and its measurement trees), or
    only a subject the running fusegate measures (a team's repository)."""
    return (Path(tree) / "gate" / "meter").is_dir()


def import_path(tree: Path) -> list[str]:
    """What a process that measures the tree at ``tree`` imports from, first to last: the tree, and for a tree
    that does not hold the meter, the running fusegate's checkout after it."""
    tree = Path(tree).resolve()
    return [str(tree)] if holds_meter(tree) else [str(tree), str(meter_root())]
