"""The declared subject: which package holds a repository's tasks, which directories are judged, the baseline.

A repository declares what the gate measures in a ``[tool.fusegate]`` table of its ``pyproject.toml``, or with the
same keys at the top of a ``fusegate.toml`` at its root (that file wins when both exist)::

    [tool.fusegate]
    version = 1
    tasks = "kernels.tasks"   # the package of the tasks: each subpackage is one task, named by its package
    subject = ["kernels/"]    # optional: the directories whose .py files are judged (default: the top-level
                              # package directory of ``tasks``)
    baseline = "handwritten"  # the implementation the others are judged against (the policy's default)
    [tool.fusegate.grid]      # per profile, the asv grid: its scales and the implementations paired with
    quick = { scales = [4096, 32768], paired = ["assembled"] }       # the baseline in one process
    full = { scales = [2048, 4096], paired = ["assembled"] }

Like the policy, the table the gate trusts is the base commit's: it says what is measured and how, so it is part
of the meter (``gate.provenance``), and a head that edits it is measured by the base's. Whether the names in it
exist (``baseline``, ``paired``) is the meter's to check against the registry (``gate.meter.subject``); this
module reads the text only. A tree that declares nothing (a commit from before the declaration) is
``UNDECLARED`` (``of_texts``), for the meter's ids and the policy's defaults alike. Standard library only: the
service, ``gate.provenance`` and the benchmark processes read it.
"""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

VERSION = 1
PYPROJECT = "pyproject.toml"
FILE = "fusegate.toml"  # the same keys at the top of a file of their own; wins over pyproject.toml's table
PROFILES = ("quick", "full")  # gate.meter.profile's profiles: the grid has one entry per profile
KEYS = ("version", "tasks", "subject", "baseline", "grid")
_PACKAGE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")
_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")
EXAMPLE = """[tool.fusegate]
version = 1
tasks = "kernels.tasks"
baseline = "handwritten"
[tool.fusegate.grid]
quick = { scales = [4096, 32768], paired = ["assembled"] }
full = { scales = [2048, 4096, 8192], paired = ["assembled"] }"""


class SubjectError(ValueError):
    """A declaration of the subject that cannot be used: says which file, which key, which value, what to do."""


@dataclass(frozen=True, kw_only=True)
class Grid:
    """One profile's asv grid: the scales (envs) measured and the implementations paired with the baseline."""

    scales: tuple[int, ...]
    paired: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class Subject:
    tasks: str  # the dotted package of the tasks, e.g. "kernels.tasks"
    dirs: tuple[str, ...]  # repository directories ("kernels/") whose .py files are the subject
    baseline: str  # the implementation the others are judged against
    grid: tuple[tuple[str, Grid], ...]  # (profile, its grid), in PROFILES order
    version: int = VERSION
    source: str = ""  # where it was read, for messages ("pyproject.toml [tool.fusegate]")

    @property
    def tasks_dir(self) -> str:
        """The tasks package's directory in the repository ("kernels/tasks")."""
        return self.tasks.replace(".", "/")

    def profile(self, name: str) -> Grid:
        """The grid of profile ``name``."""
        for profile, grid in self.grid:
            if profile == name:
                return grid
        raise SubjectError(
            f"{self.source or 'the subject'}: no grid for profile {name!r}; profiles: {PROFILES}"
        )

    def table(self) -> dict:
        """The declaration as data (what ``gate.provenance`` counts as meter: the source does not count)."""
        return {
            "version": self.version,
            "tasks": self.tasks,
            "subject": list(self.dirs),
            "baseline": self.baseline,
            "grid": {p: {"scales": list(g.scales), "paired": list(g.paired)} for p, g in self.grid},
        }

    def toml(self) -> str:
        """The declaration as the text of a ``fusegate.toml`` (``from_texts(None, s.toml())`` reads it back)."""
        t = self.table()
        lines = [f"{key} = {json.dumps(t[key])}" for key in ("version", "tasks", "subject", "baseline")]
        lines.append("[grid]")
        for profile, grid in t["grid"].items():
            lines.append(
                f"{profile} = {{ scales = {json.dumps(grid['scales'])}, paired = {json.dumps(grid['paired'])} }}"
            )
        return "\n".join(lines) + "\n"


# A tree that declares no subject: this repository before it declared one (a commit from before the declaration),
# read as what it was then, so that its runs keep the ids they recorded (``gate.provenance``) and it is judged with
# the implementations it was judged with (``gate.policy``).
UNDECLARED = Subject(
    tasks="kernels.tasks",
    dirs=("kernels/",),
    baseline="handwritten",
    grid=(
        ("quick", Grid(scales=(4096, 32768), paired=("assembled",))),
        ("full", Grid(scales=tuple(2**k for k in range(11, 19)), paired=("assembled", "assembled_generic"))),
    ),
    source="no declaration (this repository before [tool.fusegate])",
)


def declares(pyproject: str | bytes | None, fusegate_toml: str | bytes | None) -> bool:
    """Whether the texts of a tree's ``pyproject.toml`` and ``fusegate.toml`` (None: absent) declare a subject,
    readable or not: a ``fusegate.toml``, or a ``[tool.fusegate]`` table (text that is not TOML: when it names
    the table)."""
    if fusegate_toml is not None:
        return True
    if pyproject is None:
        return False
    try:
        return "fusegate" in _toml(pyproject, PYPROJECT).get("tool", {})
    except SubjectError:
        return "[tool.fusegate" in str(pyproject)


def of_texts(pyproject: str | bytes | None, fusegate_toml: str | bytes | None, *, where: str = "") -> Subject:
    """``from_texts``, or ``UNDECLARED`` for texts that declare no subject (``declares``)."""
    if not declares(pyproject, fusegate_toml):
        return UNDECLARED
    return from_texts(pyproject, fusegate_toml, where=where)


def read(root: Path) -> Subject:
    """The subject declared by the repository tree at ``root`` (its ``fusegate.toml``, else its pyproject.toml's
    ``[tool.fusegate]``)."""
    root = Path(root)

    def text(name: str) -> str | None:
        path = root / name
        try:
            return path.read_text() if path.is_file() else None
        except (OSError, UnicodeDecodeError) as exc:
            raise SubjectError(f"{path}: cannot be read ({exc})") from None

    return from_texts(text(PYPROJECT), text(FILE), where=str(root))


def from_texts(
    pyproject: str | bytes | None, fusegate_toml: str | bytes | None, *, where: str = ""
) -> Subject:
    """The subject declared by the texts of a ``pyproject.toml`` and a ``fusegate.toml`` (None: absent), e.g. git
    blobs of a commit: ``fusegate.toml`` when there is one, else pyproject.toml's ``[tool.fusegate]``."""
    at = f" at {where}" if where else ""
    if fusegate_toml is not None:
        source = f"{FILE}{at}"
        return _subject(_toml(fusegate_toml, source), source)
    source = f"{PYPROJECT} [tool.fusegate]{at}"
    if pyproject is None:
        raise SubjectError(
            f"no subject declared{at}: neither {FILE} nor {PYPROJECT} exists; declare the package of your tasks "
            f"in a [tool.fusegate] table of {PYPROJECT}, e.g.\n{EXAMPLE}"
        )
    table = _toml(pyproject, PYPROJECT + at).get("tool", {}).get("fusegate")
    if table is None:
        raise SubjectError(
            f"{PYPROJECT}{at} has no [tool.fusegate] table (and there is no {FILE}): declare the package of your "
            f"tasks there, e.g.\n{EXAMPLE}"
        )
    if not isinstance(table, dict):
        raise SubjectError(f"{source}: must be a table, got {table!r}")
    return _subject(table, source)


def _toml(text: str | bytes, source: str) -> dict:
    try:
        return tomllib.loads(text.decode() if isinstance(text, bytes) else text)
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise SubjectError(f"{source}: not valid TOML: {exc}") from None


def _subject(raw: dict, source: str) -> Subject:
    unknown = sorted(set(raw) - set(KEYS))
    if unknown:
        raise SubjectError(f"{source}: unknown key(s) {', '.join(unknown)}; known: {', '.join(KEYS)}")
    version = raw.get("version")
    if "version" in raw and (version != VERSION or isinstance(version, bool)):
        raise SubjectError(f"{source}: version {version!r} is not supported: write version = {VERSION}")
    for key in ("version", "tasks", "baseline", "grid"):
        if key not in raw:
            raise SubjectError(f"{source}: {key} is missing; e.g.\n{EXAMPLE}")
    tasks = raw["tasks"]
    if not isinstance(tasks, str) or not _PACKAGE.fullmatch(tasks):
        raise SubjectError(
            f'{source}: tasks must be a dotted package name, e.g. "kernels.tasks", got {tasks!r}'
        )
    dirs = raw.get("subject", [tasks.split(".")[0] + "/"])
    if not isinstance(dirs, list) or not dirs or not all(isinstance(d, str) for d in dirs):
        raise SubjectError(
            f'{source}: subject must be a non-empty list of directories, e.g. ["kernels/"], got {dirs!r}'
        )
    dirs = tuple(_directory(d, source) for d in dirs)
    if not any(f"{tasks.replace('.', '/')}/".startswith(d) for d in dirs):
        raise SubjectError(
            f"{source}: the tasks package {tasks!r} is outside the subject's directories {list(dirs)}: add its "
            "directory to subject (a task's kernels are the subject)"
        )
    baseline = raw["baseline"]
    if not isinstance(baseline, str) or not _NAME.fullmatch(baseline):
        raise SubjectError(
            f'{source}: baseline must be an implementation\'s name, e.g. "handwritten", got {baseline!r}'
        )
    return Subject(
        tasks=tasks,
        dirs=dirs,
        baseline=baseline,
        grid=_grid(raw["grid"], source),
        version=version,
        source=source,
    )


def _directory(d: str, source: str) -> str:
    d = d.strip().removeprefix("./")
    d = d if d.endswith("/") else d + "/"
    if d == "/" or d.startswith("/") or ".." in d.split("/") or "\\" in d:
        raise SubjectError(
            f'{source}: subject directory {d!r} must be a relative directory inside the repository, e.g. "kernels/"'
        )
    return d


def _grid(raw, source: str) -> tuple[tuple[str, Grid], ...]:
    if not isinstance(raw, dict):
        raise SubjectError(f"{source}: grid must be a table of profiles ({', '.join(PROFILES)}), got {raw!r}")
    unknown = sorted(set(raw) - set(PROFILES))
    if unknown:
        raise SubjectError(
            f"{source}: grid has unknown profile(s) {', '.join(unknown)}; profiles: {', '.join(PROFILES)}"
        )
    out = []
    for profile in PROFILES:
        where = f"{source}: grid.{profile}"
        if profile not in raw:
            raise SubjectError(f"{where} is missing: add {profile} = {{ scales = [...], paired = [...] }}")
        entry = raw[profile]
        if not isinstance(entry, dict):
            raise SubjectError(f"{where} must be a table {{ scales = [...], paired = [...] }}, got {entry!r}")
        extra = sorted(set(entry) - {"scales", "paired"})
        if extra:
            raise SubjectError(f"{where}: unknown key(s) {', '.join(extra)}; known: scales, paired")
        scales = entry.get("scales")
        if (
            not isinstance(scales, list)
            or not scales
            or not all(isinstance(s, int) and not isinstance(s, bool) and s >= 1 for s in scales)
            or len(set(scales)) != len(scales)
        ):
            raise SubjectError(
                f"{where}.scales must be a non-empty list of distinct positive env counts, e.g. [4096, 32768], "
                f"got {scales!r}"
            )
        paired = entry.get("paired", [])
        if not isinstance(paired, list) or not all(isinstance(p, str) and _NAME.fullmatch(p) for p in paired):
            raise SubjectError(f"{where}.paired must be a list of implementation names, got {paired!r}")
        out.append((profile, Grid(scales=tuple(scales), paired=tuple(paired))))
    return tuple(out)
