"""The commits a measurement times: each in the tree that measures it, with where its results go."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gate.runner.envs import Env


@dataclass(frozen=True)
class Side:
    """A commit asv measures and the tree it measures it in (``gate.runner.trees``): the repository for the
    checked-out HEAD measured with its own meter, else a git worktree under ``.fusegate/worktrees/`` (a head with
    the base's meter: the head's ``kernels/`` and the base's everything else) whose code the benchmark processes
    import, with this interpreter's environment (``asv run -E existing``), or for a head that changes the
    dependency pins, an environment with its pins (``gate.runner.envs``). Either way the benchmark processes
    import the tree's code (ASV_PYTHONPATH), not what the interpreter has installed."""

    name: str  # "head" or "base"
    sha: str
    tree: Path
    results: Path
    meter_sha: str | None = None  # whose meter measures it (None: its own)
    against: Side | None = None  # the base it is timed against in lockstep (the AgainstBase suites)
    env: Env | None = None  # the environment of the head's pins (None: this interpreter's)

    def log(self) -> Path:
        return Path(".fusegate") / "logs" / f"asv-{self.sha[:12]}.log"

    @property
    def python(self) -> str:
        """The interpreter its benchmark processes and its lockstep worker run on."""
        return str(self.env.python) if self.env is not None else sys.executable


def side_of(
    repo: Path, name: str, sha: str, results: Path, *, meter: str | None = None, say=lambda line: None
) -> Side:
    """``sha`` in the tree that measures it with ``meter``'s meter (default its own); the results of the
    repository's own tree go to ``results``, a worktree's to its own ``.asv/results``. Measured with another
    commit's meter and pinning other dependencies than that commit: in an environment of its pins, made or
    reused here (``gate.runner.envs``; ``say`` tells where)."""
    from gate.runner import asvrun, envs, trees

    asvrun.check_meter(repo, meter or sha)  # a team's repository: the fusegate that runs is the one it pins
    tree = trees.measurement_tree(repo, sha, meter=meter)
    where = results if tree.path == repo else tree.path / ".asv" / "results"
    env = None
    if meter is not None and meter != sha:
        env = envs.of_commits(repo, meter, sha)
    if env is not None:
        envs.ensure(env, say=say)
        say(
            f"  {name} pins {env.describe()}: measured in {_shown(env.path, repo)} "
            f"(the base on {sys.executable})"
        )
    return Side(name, sha, tree.path, where, meter_sha=tree.meter_commit if tree.composite else None, env=env)


def _shown(path: Path, repo: Path) -> str:
    try:
        return str(path.relative_to(Path(repo).resolve()))
    except ValueError:
        return str(path)


def has_results(side: Side, machine: str | None) -> bool:
    """Whether ``side``'s asv results directory holds its commit's results on ``machine`` (None: any), the
    file rounds append to."""
    pattern = f"{machine or '*'}/{side.sha[:8]}-*.json"
    return any(side.results.glob(pattern)) if side.results.is_dir() else False


def time_profile(results: Path, commit: str, *, since=None, total_s=None) -> list:
    """Where ``commit``'s asv time went (``gate.runner.timeprofile``)."""
    from gate.runner import timeprofile

    return timeprofile.profile(results, results.parent / "fusegate", commit, since=since, total_s=total_s)


def per_process(side: Side) -> dict[str, float]:
    """Seconds per benchmark process of each timed class in the side's results (a round's estimate)."""
    return {
        r.name: (r.wall_s / r.processes)
        for r in time_profile(side.results, side.sha)
        if r.processes and not r.name.startswith("(")
    }
