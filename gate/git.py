"""Git plumbing the gate needs from the service's clone: resolve refs, compare trees, fetch missing commits,
read a file at a commit, and the main branch's first-parent history. Every call is a ``git -C REPO`` process."""

from __future__ import annotations

import contextlib
import os
import subprocess
from pathlib import Path


class RefError(ValueError):
    """A ref that does not name a commit in the repository."""


def run(repo: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=False)


def resolve(repo: Path, ref: str) -> str:
    """Full SHA of a ref (branch, tag, HEAD, short SHA); a full SHA unknown to the repository passes through."""
    if not ref or ref.startswith("-"):
        raise RefError(f"{ref!r} is not a commit or ref")
    done = run(repo, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    if done.returncode == 0:
        return done.stdout.strip()
    if len(ref) == 40 and all(c in "0123456789abcdef" for c in ref):
        return ref
    raise RefError(f"cannot resolve {ref!r} to a commit in {repo}; fetch it or pass a full SHA")


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
                capture_output=True, check=False, timeout=timeout, env={**os.environ, "GIT_TERMINAL_PROMPT": "0"},
            )  # fmt: skip
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
