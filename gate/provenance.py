"""Which files are the subject and which the meter, and the content id of each side of a tree.

The **subject** is what a pull request is judged on: ``kernels/`` (tasks, reference, hand-written and assembled
kernels, plans, the collector's own code) and the dependency pins it runs with. The **meter** is what runs,
times, counts, checks and records it: ``gate/meter/``, the asv suites in ``benchmarks/``, ``asv.conf.json``, the
sidecar records and the parity tolerances (which live with the reference, but are read from the base like the
rest of the meter). The gate measures a head's subject with its base's meter, so a change cannot measure itself.

An id is the sha256 of (path, git blob id) of every file of the side, sorted: the same whether it is computed
from a git tree (``git ls-tree``) or from files on disk (``blob_id``), and it changes with content only.
Standard library only: the benchmark processes compute the ids of the tree they run in.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

SUBJECT_DIRS = ("kernels/",)
# Files inside the subject's directories that belong to the meter (read from the base).
METER_FILES = ("kernels/reference/tolerance.py", "asv.conf.json", "gate/sidecar.py", "gate/provenance.py")
METER_DIRS = ("gate/meter/", "benchmarks/")
# What the subject runs with: the dependency pins of pyproject.toml (a change of them is measured, never reused;
# the rest of that file, tool settings, is neither side).
PINS = "pyproject.toml"
SUFFIXES = (".py",)  # inside the directories, what is imported
# A team's repository pins the fusegate that measures it: that requirement is meter, not subject (the base's pin
# measures both sides; a head that changes it changes the meter). This repository is fusegate and names none.
METER_DISTRIBUTION = "fusegate"

MANIFEST = (
    "fusegate-measure.json"  # written into a measurement tree: what it is made of (``gate.runner.trees``)
)


def is_meter(path: str) -> bool:
    return path in METER_FILES or (path.startswith(METER_DIRS) and path.endswith(SUFFIXES))


def is_subject(path: str) -> bool:
    return path not in METER_FILES and path.startswith(SUBJECT_DIRS) and path.endswith(SUFFIXES)


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
    entries: Iterable[tuple[str, str]], pyproject: bytes | None, *, pin: str | None = None
) -> dict[str, str]:
    """{"subject": id, "meter": id} from (path, blob id) of a tree's files and its pyproject.toml's text; the
    meter's includes its fusegate pin (``meter_pin``; ``pin`` in its place, when given)."""
    entries = list(entries)
    subject = [(f, b) for f, b in entries if is_subject(f)] + [(f"{PINS}#dependencies", pins_id(pyproject))]
    meter = [(f, b) for f, b in entries if is_meter(f)]
    pin = meter_pin(pyproject) and (pin or meter_pin(pyproject))
    meter += [(f"{PINS}#{METER_DISTRIBUTION}", blob_id(_same_form(pin).encode()))] if pin else []
    return {"subject": content_id(subject), "meter": content_id(meter)}


def ids_on_disk(root: Path) -> dict[str, str]:
    """The ids of the tree at ``root`` as it is on disk (tracked or not: what its processes import). A tree that
    pins fusegate is measured by the fusegate that runs: its meter's id names that one (``running_pin``), the
    same as its base's when it is the version the base pins."""
    root = Path(root)
    files = _files(root, {*SUBJECT_DIRS, *METER_DIRS}) | {f for f in METER_FILES if (root / f).is_file()}
    return ids(((f, blob_id((root / f).read_bytes())) for f in files), _pins(root), pin=running_pin())


def running_pin() -> str:
    """``fusegate==VERSION`` of the fusegate that runs (its installed distribution's version)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"{METER_DISTRIBUTION}=={version(METER_DISTRIBUTION)}"
    except PackageNotFoundError:
        return f"{METER_DISTRIBUTION} (not installed)"


def _files(root: Path, dirs: Iterable[str]) -> set[str]:
    return {
        p.relative_to(root).as_posix()
        for d in dirs
        for p in (root / d).rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }


def _pins(root: Path) -> bytes | None:
    pins = root / PINS
    return pins.read_bytes() if pins.is_file() else None


def _imports(root: Path, path: str) -> set[str]:
    """The subject modules (repository paths) that the module at ``path`` imports anywhere, also inside
    functions (a superset), relative imports resolved."""
    import ast

    package = path.split("/")[:-1]
    found = set()
    for node in ast.walk(ast.parse((root / path).read_bytes())):
        if isinstance(node, ast.Import):
            names = [alias.name.split(".") for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            module = (node.module or "").split(".") if node.module else []
            if node.level:
                module = package[: len(package) - node.level + 1] + module
            names = [module, *([*module, alias.name] for alias in node.names)]
        else:
            continue
        for parts in names:
            for candidate in ("/".join(parts) + ".py", "/".join([*parts, "__init__.py"])):
                if is_subject(candidate) and (root / candidate).is_file():
                    found.add(candidate)
    return found


def implementation_id(root: Path, entry: str, entries: Iterable[str]) -> str:
    """The id of what one implementation's kernel is made of, in the tree at ``root`` as it is on disk: the pins
    and every subject file but those only other implementations reach. What runs beside every kernel is part of
    each: every module outside the implementations' packages (the directories of ``entries``, repository paths of
    every kernel's module: the package, the registry, the collector, the tasks and their plans, which the
    registry imports by name), every module no implementation imports, and everything they import, transitively.
    A module in an implementations' package belongs to the implementations whose imports reach it, with the
    packages above each module: an edit to one implementation's module, or to a module in its package that only
    some implementations import (the code generator of the generated kernels), leaves the others' ids alone; an
    edit to anything every kernel runs beside (a task, a plan, the registry) changes every id. A module that does
    not parse: the whole subject's id for the kernels that reach it."""
    return _implementation_ids(Path(root), [entry], entries)[entry]


def _implementation_ids(root: Path, wanted: Iterable[str], entries: Iterable[str]) -> dict[str, str]:
    """``implementation_id`` of each of ``wanted``, reading and parsing each subject file at most once."""
    entries = set(entries)
    subject = {f for f in _files(root, SUBJECT_DIRS) if is_subject(f)}
    modules = {f for f in subject if f.endswith(".py")}
    blobs = {f: blob_id((root / f).read_bytes()) for f in subject}
    pins = (f"{PINS}#dependencies", pins_id(_pins(root)))
    graph: dict[str, set[str]] = {}
    broken: set[str] = set()

    def closure(starts: Iterable[str]) -> set[str]:
        reach = set(starts)
        todo = list(reach)
        while todo:
            module = todo.pop()
            if module not in graph:
                try:
                    graph[module] = _imports(root, module)
                except (OSError, SyntaxError, ValueError):
                    graph[module] = set()
                    broken.add(module)
            for dep in graph[module] - reach:
                reach.add(dep)
                todo.append(dep)
        return reach

    own = {entry: closure([entry]) for entry in entries if entry in modules}
    reached = set().union(*own.values()) if own else set()
    # what runs beside every kernel: the modules no implementation imports, and every module outside the
    # implementations' packages (the registry imports tasks and plans by name)
    families = {entry.rpartition("/")[0] for entry in entries}
    always = closure({m for m in modules if m not in reached or m.rpartition("/")[0] not in families})
    out = {}
    for entry in wanted:
        reach = (own[entry] if entry in own else closure([entry])) | always
        while (grown := closure(_with_packages(reach, subject))) != reach:  # a package's imports count too
            reach = grown
        if reach & broken:
            out[entry] = ids_on_disk(root)["subject"]
            continue
        out[entry] = content_id([*((f, b) for f, b in blobs.items() if f in reach or f not in modules), pins])
    return out


def _with_packages(reach: set[str], subject: set[str]) -> set[str]:
    """``reach`` with the package ``__init__.py`` above each module: importing a module runs them first."""
    out = set(reach)
    for module in reach:
        parts = module.split("/")[:-1]
        for k in range(1, len(parts) + 1):
            init = "/".join([*parts[:k], "__init__.py"])
            if init in subject:
                out.add(init)
    return out


def kernel_files(root: Path) -> dict[tuple[str, str], str]:
    """(task, impl) -> the repository path of its kernel's module in the tree at ``root``, read from the text of
    the registry's table ``_IMPLEMENTATIONS`` (the subject's code is not run for it); {} without such a table."""
    import ast

    try:
        tree = ast.parse((Path(root) / "kernels" / "registry.py").read_text())
        table = next(
            ast.literal_eval(node.value)
            for node in tree.body
            if isinstance(node, ast.AnnAssign)
            and getattr(node.target, "id", None) == "_IMPLEMENTATIONS"
            and node.value is not None
        )
        return {
            (task, impl): target.split(":")[0].replace(".", "/") + ".py"
            for impl, tasks in table.items()
            for task, target in tasks.items()
        }
    except (OSError, SyntaxError, ValueError, StopIteration, AttributeError, TypeError):
        return {}


def kernel_ids(root: Path) -> dict[str, str]:
    """``"task/impl"`` -> ``implementation_id`` of every kernel in the registry's table of the tree at ``root``
    ({} without the table). Two trees whose ids of a kernel agree run the same sources for it."""
    files = kernel_files(root)
    found = _implementation_ids(Path(root), sorted(set(files.values())), files.values())
    return {f"{task}/{impl}": found[entry] for (task, impl), entry in files.items()}


def of_commit(files: Iterable[tuple[str, str]], pyproject: str | None) -> dict[str, str]:
    """The ids of a commit, from ``gate.git.files`` and its pyproject.toml's text (``gate.git.show``)."""
    return ids(files, None if pyproject is None else pyproject.encode())


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
