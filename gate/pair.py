"""The pair of commits a pull request is judged on: its change, not the distance between its branch and main.

A pull request branched from an older commit of its target is not charged with what the target changed since:
when the base (the target's tip) is not an ancestor of the head, the gate judges the head **merged into the
base** against the base, the way CodSpeed and rustc-perf judge a pull request's merge commit. The merge is made
here, not taken from GitHub: ``git merge-tree`` writes its tree and ``git commit-tree`` the commit with a fixed
identity and the head's commit date, so every machine and the service make the same commit from the same
(base, head), and each finds the others' results under its SHA. It is kept under ``refs/fusegate/merges/`` so
git never collects it. A head that does not merge cleanly cannot be judged: rebase it.

Policy and meter are the base's in every case: the target's tip, never an older fork point with a laxer policy.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

REF_PREFIX = "refs/fusegate/merges/"
_IDENTITY = {
    "GIT_AUTHOR_NAME": "fusegate",
    "GIT_AUTHOR_EMAIL": "fusegate@localhost",
    "GIT_COMMITTER_NAME": "fusegate",
    "GIT_COMMITTER_EMAIL": "fusegate@localhost",
}


class PairError(ValueError):
    """A head that cannot be judged against its base: says why and what to do."""


@dataclass(frozen=True, kw_only=True)
class Pair:
    base: str  # the target's tip: the base side, its policy and its meter
    head: str  # the commit judged against the base: the pull request's head, or it merged into the base
    pr_head: str  # the pull request's head, where the commit status goes

    @property
    def merged(self) -> bool:
        return self.head != self.pr_head

    def describe(self) -> str:
        """One line for a merged pair (empty for a head that contains its base)."""
        if not self.merged:
            return ""
        return (
            f"head {self.pr_head[:12]} does not contain base {self.base[:12]}: judged as merged into it "
            f"({self.head[:12]}), so it is not charged with what the base changed since it branched"
        )


def _git(repo: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=False, env=env
    )


def is_ancestor(repo: Path, a: str, b: str) -> bool:
    """True when commit ``a`` is ``b`` or one of its ancestors."""
    return _git(repo, "merge-base", "--is-ancestor", a, b).returncode == 0


def judged(repo: Path, base: str, head: str) -> Pair:
    """The pair to judge for a pull request from ``head`` into the branch whose tip is ``base`` (full SHAs)."""
    if base == head or is_ancestor(repo, base, head):
        return Pair(base=base, head=head, pr_head=head)
    return Pair(base=base, head=merge(repo, base, head), pr_head=head)


def merge(repo: Path, base: str, head: str) -> str:
    """The commit of ``head`` merged into ``base`` (parents: base, head), the same SHA wherever it is made."""
    ref = f"{REF_PREFIX}{head}-{base}"
    kept = _git(repo, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    if kept.returncode == 0:
        return kept.stdout.strip()
    done = _git(repo, "merge-tree", "--write-tree", "--name-only", "--no-messages", base, head)
    if done.returncode == 1:
        conflicts = done.stdout.split("\n")[1:]
        shown = ", ".join(p for p in conflicts if p)[:300] or "(see git merge-tree)"
        raise PairError(
            f"head {head[:12]} does not merge cleanly into base {base[:12]} (conflicts in {shown}): "
            "rebase it onto the base, then push again"
        )
    if done.returncode != 0:
        raise PairError(
            f"cannot merge head {head[:12]} into base {base[:12]}: {done.stderr.strip()[-300:]} "
            "(git 2.38 or newer is needed; are both commits fetched?)"
        )
    tree = done.stdout.split("\n")[0].strip()
    stamp = _git(repo, "show", "-s", "--format=%ct", head).stdout.strip()
    env = {
        **os.environ,
        **_IDENTITY,
        "GIT_AUTHOR_DATE": f"@{stamp} +0000",
        "GIT_COMMITTER_DATE": f"@{stamp} +0000",
    }
    message = f"fusegate: {head} merged into {base}"
    made = _git(repo, "commit-tree", tree, "-p", base, "-p", head, "-m", message, env=env)
    if made.returncode != 0:
        raise PairError(
            f"cannot make the merge of {head[:12]} into {base[:12]}: {made.stderr.strip()[-300:]}"
        )
    sha = made.stdout.strip()
    _git(repo, "update-ref", ref, sha)
    return sha
