"""A throwaway git repository with commits whose policy files the tests choose."""

from __future__ import annotations

import subprocess
from pathlib import Path

from gate.policy import POLICY_FILE


def git(repo: Path, *args: str) -> str:
    env = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t.invalid",
        "PATH": "/usr/bin:/bin",
        "HOME": str(repo),
    }
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True, env=env
    ).stdout.strip()


def commit(repo: Path, *, policy: str | None = None, message: str = "change") -> str:
    if not (repo / ".git").exists():
        repo.mkdir(parents=True, exist_ok=True)
        git(repo, "init", "-q", "-b", "main")
    if policy is not None:
        (repo / POLICY_FILE).write_text(policy)
        git(repo, "add", POLICY_FILE)
    git(repo, "commit", "-q", "--allow-empty", "-m", message)
    return git(repo, "rev-parse", "HEAD")


def base_and_head(path: Path, *, policy: str) -> tuple[Path, str, str]:
    """A repository with a base commit carrying ``policy`` and a head commit on top: (path, base, head)."""
    base = commit(path, policy=policy, message="base")
    return path, base, commit(path, message="head")
