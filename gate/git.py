"""Git plumbing the gate needs from the service's clone: resolve refs, compare trees, fetch missing commits,
read a file at a commit, and the main branch's first-parent history. Every call is a ``git -C REPO`` process."""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
from pathlib import Path


class RefError(ValueError):
    """A ref that does not name a commit in the repository."""


def run(repo: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=False)


REF_MAX = 200
_FULL_SHA = re.compile(r"[0-9a-f]{40}")
# Full SHAs already resolved, per repository: an object name never changes what it names, so a read of a stored
# verdict by SHA starts no git process after the first. Branch names move and are asked of git every time.
_KNOWN: dict[str, set[str]] = {}


def ref_problem(ref: object) -> str | None:
    """Why ``ref`` cannot name a commit, before git sees it, or None: a ref or revision (``main``, ``v1``, a SHA,
    ``HEAD~1``) has no blank or control character, does not start with ``-`` and is at most ``REF_MAX`` long."""
    if not isinstance(ref, str) or not ref:
        return "a ref is a non-empty string"
    if len(ref) > REF_MAX:
        return f"a ref is at most {REF_MAX} characters, got {len(ref)}"
    if ref.startswith("-") or not ref.isprintable() or any(c.isspace() for c in ref):
        return (
            f"{ref[:40]!r} is not a ref: a ref has no blank or control character and does not start with '-'"
        )
    return None


def resolve(repo: Path, ref: str) -> str:
    """Full SHA of a ref (branch, tag, HEAD, short SHA); a full SHA unknown to the repository passes through.
    Raises ``RefError`` for anything else, naming the ref but never the repository's path."""
    problem = ref_problem(ref)
    if problem is not None:
        raise RefError(problem)
    known = _KNOWN.setdefault(str(repo), set())
    if ref in known:
        return ref
    done = run(repo, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    if done.returncode == 0:
        sha = done.stdout.strip()
        if sha == ref and len(known) < 100_000:
            known.add(sha)
        return sha
    if _FULL_SHA.fullmatch(ref):
        return ref
    raise RefError(
        f"cannot resolve {ref!r} to a commit in the service's repository; fetch it or pass a full SHA"
    )


def same_tree(repo: Path, a: str, b: str) -> bool:
    trees = [run(repo, "rev-parse", f"{sha}^{{tree}}").stdout.strip() for sha in (a, b)]
    return bool(trees[0]) and trees[0] == trees[1]


def missing(repo: Path, shas: list[str]) -> list[str]:
    return [s for s in shas if run(repo, "cat-file", "-e", f"{s}^{{commit}}").returncode != 0]


def fetch_missing(repo: Path, shas: list[str], *, timeout: float = 120.0) -> list[str]:
    """Fetch the commits the service's clone does not have yet (a new PR head); returns those still missing."""
    absent = missing(repo, shas)
    if absent:
        with contextlib.suppress(subprocess.TimeoutExpired):  # what is still missing is reported below
            subprocess.run(
                ["git", "-C", str(repo), "fetch", "--quiet", "origin", *absent],
                capture_output=True,
                check=False,
                timeout=timeout,
                env={**os.environ, "GIT_TERMINAL_PROMPT": "0"},
            )
        absent = missing(repo, absent)
    return absent


_MAINLINES: dict[tuple[str, str], list[str]] = {}


def mainline(repo: Path, branch: str) -> list[str]:
    """The first-parent history of ``branch``, oldest first; empty when the repository has no such branch.
    Cached by the branch's tip, so it is read again only when the branch moves."""
    tip = run(repo, "rev-parse", "--verify", "--quiet", f"{branch}^{{commit}}").stdout.strip()
    if not tip:
        return []
    key = (str(repo), tip)
    if key not in _MAINLINES:
        done = run(repo, "rev-list", "--first-parent", "--reverse", tip)
        _MAINLINES.clear()  # one branch tip at a time is all a service needs
        _MAINLINES[key] = done.stdout.split() if done.returncode == 0 else []
    return _MAINLINES[key]


def show(repo: Path, sha: str, path: str) -> str | None:
    """The text of ``path`` at commit ``sha``, or None when the commit has no such file (or is not there)."""
    done = run(repo, "show", f"{sha}:{path}")
    return done.stdout if done.returncode == 0 else None


def differs(repo: Path, a: str, b: str, path: str) -> bool:
    """True when ``path`` differs between commits ``a`` and ``b``."""
    return run(repo, "diff", "--quiet", a, b, "--", path).returncode == 1


def files(repo: Path, sha: str) -> list[tuple[str, str]]:
    """(path, blob id) of every file of commit ``sha`` (``git ls-tree -r``); empty when it is not there."""
    done = run(repo, "ls-tree", "-r", "-z", "--full-tree", sha)
    out = []
    for entry in done.stdout.split("\0") if done.returncode == 0 else ():
        meta, _, path = entry.partition("\t")
        if meta.count(" ") == 2 and meta.split()[1] == "blob":
            out.append((path, meta.split()[2]))
    return out


def changed(repo: Path, a: str, b: str) -> list[str]:
    """The paths that differ between commits ``a`` and ``b``."""
    done = run(repo, "diff", "--name-only", "--no-renames", a, b)
    return done.stdout.split("\n")[:-1] if done.returncode == 0 else []


def is_ancestor(repo: Path, a: str, b: str) -> bool:
    """True when commit ``a`` is ``b`` or one of its ancestors."""
    return run(repo, "merge-base", "--is-ancestor", a, b).returncode == 0
