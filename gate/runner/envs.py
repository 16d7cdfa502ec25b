"""The environment a head runs in when it changes the dependency pins.

The base runs on the interpreter fusegate runs on. A head whose ``[project].dependencies`` differ from its base's
(``gate.provenance.pin_changes``: the order of the list and the rest of pyproject.toml do not count) runs its
benchmark processes and its lockstep worker in a virtual environment with its own pins: made with the venv module
of that interpreter under ``.fusegate/envs/<id>`` (the id of the requirements and the interpreter's version), kept
and reused by every head with the same pins. It holds the head's dependencies, and those of the base's that the
head does not name (what the base's meter imports, such as asv), each as its commit pins it. Nothing of fusegate is
installed in it: the benchmark processes import the measured tree's code (ASV_PYTHONPATH, PYTHONPATH), as on the
base's interpreter.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from gate import git
from gate.provenance import (
    METER_DISTRIBUTION,
    PINS,
    PinChange,
    dependencies,
    meter_pin,
    pin_changes,
    requirement_name,
)

MARKER = "fusegate-env.json"  # written last: an environment without it is rebuilt
REQUIREMENTS = "fusegate-requirements.txt"


class EnvError(ValueError):
    """The head's pins that do not install: which, and pip's own words."""


@dataclass(frozen=True)
class Env:
    """A head's environment: where, with what, and how the head's pins differ from the base's."""

    path: Path
    requirements: tuple[str, ...]
    changes: tuple[PinChange, ...]

    @property
    def python(self) -> Path:
        return self.path / "bin" / "python"

    @property
    def log(self) -> Path:
        return self.path.parent.parent / "logs" / f"pip-{self.path.name}.log"

    def commands(self) -> list[list[str]]:
        """Make the environment from this interpreter, then install the requirements file into it."""
        return [
            [sys.executable, "-m", "venv", "--clear", str(self.path)],
            [str(self.python), "-m", "pip", "install", "--no-input", "-r", str(self.path / REQUIREMENTS)],
        ]

    def environ(self) -> dict[str, str]:
        """The commands' environment: this one (pip's index settings stay) without a PYTHONPATH that would put
        another tree's packages in pip's way."""
        return {
            **{k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")},
            "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        }

    def describe(self) -> str:
        return ", ".join(c.describe() for c in self.changes)

    def ready(self) -> bool:
        try:
            made = json.loads((self.path / MARKER).read_text())
        except (OSError, ValueError):
            return False
        return made.get("requirements") == list(self.requirements) and self.python.exists()


def requirements(base: bytes | str | None, head: bytes | str | None) -> tuple[str, ...]:
    """The head's dependencies, then the base's that the head does not name. A team's repository pins the
    fusegate that measures it (``gate.provenance.meter_pin``): that pin is not installed (the benchmark processes
    import the running fusegate, the base's pin), its dependencies that neither side names are."""
    theirs = dependencies(head)
    named = {requirement_name(r) for r in theirs}
    found = [*theirs, *(r for r in dependencies(base) if requirement_name(r) not in named)]
    if meter_pin(base) or meter_pin(head):
        named |= {requirement_name(r) for r in found}
        found += [r for r in meter_requirements() if requirement_name(r) not in named]
    return tuple(r.strip() for r in found if requirement_name(r) != METER_DISTRIBUTION)


def meter_requirements() -> list[str]:
    """The running fusegate's own dependencies (its installed metadata, extras left out)."""
    from importlib.metadata import PackageNotFoundError, requires

    try:
        return [r for r in requires(METER_DISTRIBUTION) or [] if "extra ==" not in r]
    except PackageNotFoundError:
        return []


def env_id(reqs: tuple[str, ...]) -> str:
    """The id of a pin set on this interpreter's version."""
    key = {
        "python": platform.python_version(),
        "implementation": sys.implementation.name,
        "requirements": sorted(reqs),
    }
    return hashlib.sha256(json.dumps(key).encode()).hexdigest()[:16]


def plan(repo: Path, base: bytes | str | None, head: bytes | str | None) -> Env | None:
    """The environment a head with pyproject.toml ``head`` runs in against a base with ``base`` (None: the pins
    are the same, the base's interpreter runs both)."""
    changes = pin_changes(base, head)
    if not changes:
        return None
    reqs = requirements(base, head)
    return Env(
        path=Path(repo).resolve() / ".fusegate" / "envs" / env_id(reqs), requirements=reqs, changes=changes
    )


def of_commits(repo: Path, base: str, head: str) -> Env | None:
    """``plan`` for two commits of ``repo``, from their pyproject.toml files."""
    return plan(repo, git.show(repo, base, PINS), git.show(repo, head, PINS))


def ensure(env: Env, say: Callable[[str], None] = lambda line: None) -> Env:
    """``env`` made and installed, or reused when made before; one maker at a time (a lock file beside it)."""
    env.path.parent.mkdir(parents=True, exist_ok=True)
    with open(env.path.parent / f"{env.path.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if env.ready():
            return env
        say(f"installing the head's pins ({env.describe()}) into {env.path}; pip's output: {env.log}")
        env.log.parent.mkdir(parents=True, exist_ok=True)
        make, install = env.commands()
        with open(env.log, "w") as log:
            _run(make, env, log)
            (env.path / REQUIREMENTS).write_text("\n".join(env.requirements) + "\n")
            _run(install, env, log)
        (env.path / MARKER).write_text(json.dumps({"requirements": list(env.requirements)}, indent=1))
    return env


def _run(command: list[str], env: Env, log) -> None:
    log.write(f"$ {' '.join(command)}\n")
    log.flush()
    try:
        done = subprocess.run(command, env=env.environ(), capture_output=True, text=True, check=False)
    except OSError as exc:
        raise EnvError(f"could not run {command[0]}: {exc}") from exc
    log.write(done.stdout + done.stderr)
    if done.returncode:
        shutil.rmtree(env.path, ignore_errors=True)  # half made: made again next time
        raise EnvError(_failure(env, done.stdout + done.stderr, done.returncode))


def _failure(env: Env, output: str, code: int) -> str:
    """Which of the head's changed pins pip refused (all of them when its words name none), and its words."""
    errors = [line.strip()[:300] for line in output.splitlines() if line.strip().startswith("ERROR")]
    said = "\n".join(errors) or "\n".join(output.strip().splitlines()[-5:])
    named = [c for c in env.changes if c.new and any(c.name in _names(e) for e in errors)]
    which = ", ".join(c.new for c in named) if named else env.describe()
    return (
        f"the head's pins do not install ({which}; pip exited with {code}): {said}\n"
        f"pip's output: {env.log}. Pin versions that have wheels for Python {platform.python_version()} here."
    )


def _names(line: str) -> set[str]:
    """The normalized distribution names a line of pip's could mean (every word, as a requirement's name)."""
    return {requirement_name(word) for word in line.replace("(", " ").replace(")", " ").split()}
