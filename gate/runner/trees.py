"""The tree a commit is measured in: its own subject, the base commit's meter.

Like the policy, the code that measures comes from the base: a head's results are taken in a git worktree whose
subject directories (as the base declares them, ``gate.subject``) and ``pyproject.toml`` (the subject and its
dependency pins, ``gate.provenance``) are the head's and whose everything else (the meter: ``gate/meter``,
``benchmarks/``, ``asv.conf.json``, each task's ``meter.py``, the declaration itself) is the base's, so a pull
request cannot change how it is measured. The tree is a commit of its own (parent: the head, never on a branch) checked out under
``.fusegate/worktrees/<head>-m<base>``; asv records its results as the head's (``--set-commit-hash``), and every
benchmark process records the ids of the subject and meter it ran (``gate.provenance.ids_on_disk``).
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from gate import git, provenance

_IDENTITY = {
    "GIT_AUTHOR_NAME": "fusegate",
    "GIT_AUTHOR_EMAIL": "fusegate@localhost",
    "GIT_COMMITTER_NAME": "fusegate",
    "GIT_COMMITTER_EMAIL": "fusegate@localhost",
}


class TreeError(ValueError):
    """A measurement tree that cannot be made: says what and what to do."""


@dataclass(frozen=True, kw_only=True)
class Tree:
    commit: str  # the commit whose results these are
    meter_commit: str  # the commit whose meter measures it
    path: Path
    ids: dict[str, str]  # provenance ids of the subject and the meter in the tree
    meter_changes: tuple[str, ...] = ()  # meter files ``commit`` changes against ``meter_commit`` (not used)

    @property
    def composite(self) -> bool:
        return self.commit != self.meter_commit


def layout(repo: Path, sha: str) -> provenance.Layout:
    """The layout commit ``sha`` declares (``gate.provenance.layout``)."""
    return provenance.layout(
        git.show(repo, sha, provenance.PINS), git.show(repo, sha, provenance.DECLARATION)
    )


def ids(repo: Path, sha: str) -> dict[str, str]:
    """The provenance ids of commit ``sha`` as git has it."""
    pins, table = git.show(repo, sha, provenance.PINS), git.show(repo, sha, provenance.DECLARATION)
    return provenance.of_commit(git.files(repo, sha), pins, table)


def meter_changes(repo: Path, base: str, head: str) -> tuple[str, ...]:
    """The meter's files that ``head`` changes against ``base`` (and ``provenance.TABLE``: its declaration)."""
    return provenance.meter_changes(git.changed(repo, base, head), layout(repo, base), layout(repo, head))


def _git(repo: Path, *args: str, env: dict | None = None, input: str | None = None) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=False, env=env, input=input
    )
    if done.returncode:
        raise TreeError(f"git {' '.join(args[:3])} failed: {done.stderr.strip()[-300:]}")
    return done.stdout.strip()


def composite_commit(repo: Path, head: str, meter: str) -> str:
    """A commit of ``meter``'s tree with ``head``'s subject: the files in the subject's directories (as ``meter``
    declares them) but the meter's files there (``meter``'s: each task's meter.py, the snapshot helpers), and
    ``head``'s ``pyproject.toml`` (the pins) with ``meter``'s declaration of the subject (a ``fusegate.toml``,
    which wins over the table in the head's pyproject.toml)."""
    where = layout(repo, meter)
    with tempfile.TemporaryDirectory(prefix="fusegate-index-") as tmp:
        env = {**os.environ, **_IDENTITY, "GIT_INDEX_FILE": str(Path(tmp) / "index")}
        _git(repo, "read-tree", meter, env=env)
        for d in where.dirs:
            _git(repo, "rm", "-r", "-q", "-f", "--cached", "--ignore-unmatch", d, env=env)
            if _git(repo, "ls-tree", "-d", head, d.rstrip("/")):
                _git(repo, "read-tree", f"--prefix={d}", f"{head}:{d.rstrip('/')}", env=env)
        # the meter's files inside the subject's directories are the meter's (a head's own are dropped); the file
        # of the pins is the head's
        inside = [
            p
            for p in _git(repo, "ls-files", "--cached", *where.dirs, env=env).splitlines()
            + _git(repo, "ls-tree", "-r", "--name-only", meter, "--", *where.dirs).splitlines()
            if where.is_meter(p)
        ]
        for commit, path in [*((meter, p) for p in sorted(set(inside))), (head, provenance.PINS)]:
            entry = _git(repo, "ls-tree", commit, path)
            if entry:
                mode, _, blob = entry.split("\t")[0].split()
                _git(repo, "update-index", "--add", "--cacheinfo", f"{mode},{blob},{path}", env=env)
            else:
                _git(repo, "update-index", "--force-remove", path, env=env)
        if where.declaration is not None and not _git(repo, "ls-tree", meter, provenance.DECLARATION):
            # declared in the meter's pyproject.toml, which the head's replaces: its declaration as a file of its own
            blob = _git(repo, "hash-object", "-w", "--stdin", input=where.declaration.toml())
            _git(
                repo,
                "update-index",
                "--add",
                "--cacheinfo",
                f"100644,{blob},{provenance.DECLARATION}",
                env=env,
            )
        tree = _git(repo, "write-tree", env=env)
        message = f"fusegate: the subject of {head[:12]} measured with the meter of {meter[:12]}"
        return _git(repo, "commit-tree", tree, "-p", head, "-m", message, env=env)


def checkout(repo: Path, sha: str, where: Path) -> Path:
    """A detached worktree of ``sha`` at ``where`` (kept and reused: asv's results and Numba's cache stay)."""
    if (where / ".git").exists():
        if _git(where, "rev-parse", "HEAD") == sha:
            return where
        _git(where, "checkout", "--quiet", "--detach", "--force", sha)
        return where
    where.parent.mkdir(parents=True, exist_ok=True)
    _git(repo, "worktree", "add", "--detach", "--force", str(where), sha)
    return where


def measurement_tree(repo: Path, commit: str, *, meter: str | None = None) -> Tree:
    """The tree to measure ``commit`` in with ``meter``'s meter (default: its own). A commit measured with its
    own meter is the repository itself when it is the checked-out HEAD, else a worktree of it."""
    meter = meter or commit
    own = ids(repo, commit)
    if meter == commit or ids(repo, meter)["meter"] == own["meter"]:
        # its own meter is the base's (the head changes no meter file): the commit itself
        path = repo if commit == git.resolve(repo, "HEAD") else checkout(repo, commit, _place(repo, commit))
        return Tree(commit=commit, meter_commit=meter, path=path, ids=own)
    changes = meter_changes(repo, meter, commit)
    sha = composite_commit(repo, commit, meter)
    path = checkout(repo, sha, _place(repo, commit, meter))
    tree = Tree(commit=commit, meter_commit=meter, path=path, ids=ids(repo, sha), meter_changes=changes)
    (path / provenance.MANIFEST).write_text(
        json.dumps({"commit": commit, "meter_commit": meter, "meter_changes": list(changes), **tree.ids})
    )
    return tree


def _place(repo: Path, commit: str, meter: str | None = None) -> Path:
    name = commit[:12] if meter is None else f"{commit[:12]}-m{meter[:12]}"
    return repo / ".fusegate" / "worktrees" / name
