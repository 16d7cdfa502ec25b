"""What the commands share: argument types that refuse bad input with a message, the common options, and the
settings (``gate.settings.Settings``: the same object the service reads) with the store they name."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from pathlib import Path

from gate.settings import Settings


def settings() -> Settings:
    """The settings as the environment has them now (read per call: a command reads them once or twice)."""
    return Settings()


DEFAULT_BENCH_ENVS = (2048, 8192, 32768, 131072)


DEFAULT_BENCH_THREADS = (1, 2)


def listed(
    kind: Callable[[str], object], allowed: Callable[[], Sequence[str]] | None = None
) -> Callable[[str], list]:
    """An argparse type: a comma-separated list of ``kind``, each one of ``allowed()`` when given."""

    def parse(text: str) -> list:
        items = [kind(x.strip()) for x in text.split(",") if x.strip()]
        if not items:
            raise argparse.ArgumentTypeError("expected a comma-separated list, got nothing")
        names = allowed() if allowed is not None else ()
        unknown = [x for x in items if allowed is not None and x not in names]
        if unknown:
            raise argparse.ArgumentTypeError(
                f"unknown value(s) {', '.join(map(str, unknown))}; choose from {', '.join(names)}"
            )
        return items

    return parse


def int_at_least(minimum: int, what: str) -> Callable[[str], int]:
    """An argparse type: an integer >= ``minimum``, refused as "expected <what>"."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"expected {what}, got {value}")
        return value

    return parse


positive_int = int_at_least(1, "a positive integer")


nonnegative_int = int_at_least(0, "a count (0 or more)")


def noise_level(text: str) -> float:
    value = float(text)
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"noise level must be >= 0, got {text}")
    return value


def _known(what: str) -> Callable[[], Sequence[str]]:
    """The kernels' task or implementation names, read when an option names one (the kernels import Numba)."""

    def names() -> Sequence[str]:
        import kernels

        return kernels.TASKS if what == "task" else kernels.IMPLS

    return names


def kernel_defaults(args: argparse.Namespace) -> None:
    """Every task and implementation where a kernels command was given none."""
    for what in ("task", "impl"):
        if getattr(args, what, False) is None:
            setattr(args, what, list(_known(what)()))


def task_impl_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--task", type=listed(str, _known("task")), metavar="TASK[,TASK...]", help="default: all")
    p.add_argument("--impl", type=listed(str, _known("impl")), metavar="IMPL[,IMPL...]", help="default: all")


def bench_options(p: argparse.ArgumentParser, *, repeats: int) -> None:
    p.add_argument(
        "--num-envs", type=listed(positive_int), default=list(DEFAULT_BENCH_ENVS), metavar="N[,N...]"
    )
    p.add_argument(
        "--threads", type=listed(positive_int), default=list(DEFAULT_BENCH_THREADS), metavar="T[,T...]"
    )
    p.add_argument("--repeats", type=positive_int, default=repeats, help="interleaved rounds per cell")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.add_argument(
        "--no-jit", action="store_true", help="skip measuring compile and cache-load time in fresh processes"
    )


DEFAULT_RESULTS = ".asv/results"


def factors(text: str) -> list[float]:
    try:
        values = [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated factors such as 1,1.05,1.1, got {text!r}"
        ) from None
    if not values or any(not v > 0 for v in values):
        raise argparse.ArgumentTypeError(f"factors must be positive, got {text!r}")
    return values


def minutes(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected a positive number of minutes, got {text!r}")
    return value


def rows_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--rows",
        choices=("summary", "all"),
        default="summary",
        help="summary (default): the verdict, the findings that decided it, the undecided rows, the passes "
        "counted; all: every row's table and the evaluation's reasons",
    )


def db_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--db",
        metavar="URL",
        help="store URL (default: $FUSEGATE_DATABASE_URL or sqlite:///.fusegate/fusegate.db)",
    )


def repo_path() -> Path:
    """The project's clone the gate reads policies and refs from (``FUSEGATE_REPO``, default: here)."""
    return settings().repo.resolve()


def store_url(args: argparse.Namespace) -> str:
    """The store the command works on (``--db``, else the settings'), migrated to the newest schema: a local
    command is its own start-up step."""
    from gate.store import db

    url = args.db or settings().database_url
    db.upgrade(url)
    return url


def commits_of(args: argparse.Namespace) -> tuple[str, Path, str, str]:
    """(store URL, repository, base SHA, head SHA); ingests ``--results`` first when the command has it."""
    from gate import git

    url = store_url(args)
    repo = repo_path()
    base, head = git.resolve(repo, args.base), git.resolve(repo, args.head)
    results = getattr(args, "results", None)
    if results and Path(results).is_dir():
        from gate.services import results as arrivals

        arrivals.arrived_from_directory(url, repo=repo, results=Path(results))
    return url, repo, base, head


def judged_pair(repo: Path, base_ref: str, head_ref: str, say) -> tuple[str, str]:
    """(base, head) SHAs of the change a pull request from ``head_ref`` into ``base_ref`` makes
    (``gate.pair``): the head itself when it contains the base, else the head merged into the base."""
    from gate import git, pair

    found = pair.judged(repo, git.resolve(repo, base_ref), git.resolve(repo, head_ref))
    if found.merged:
        say(f"  {found.describe()}")
    return found.base, found.head


def need(value: str | None, variable: str) -> str:
    """A runner setting, or a configuration error (exit 78) that says which variable to export."""
    from gate.settings import SettingsError

    if not value:
        raise SettingsError(f"{variable} is not set: export it (or pass the option) on the runner")
    return value
