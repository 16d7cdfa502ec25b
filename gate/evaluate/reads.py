"""What a row kind reads: the asv benchmarks whose processes back its rows, and how a row's cell selects their
parameter combinations.

Each kind's module declares its ``READS`` (a ``Reads``); ``gate.evaluate.kinds`` registers them by kind. From
them derive the cells more rounds may still decide (``open_cells``: the commit status waits on them, ``GET
/api/rounds`` asks the runners for them), the ``asv run --bench`` selections of a row (``selections``, turned into
patterns by ``gate.runner.rounds``) and the time a round of them takes (``Selection.suite``: the class whose
seconds per process estimate it). A kind that reads nothing more rounds could add to (a correctness failure, the
meter's findings, a machine) declares no ``rounds``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import NamedTuple

from gate.domain.vocabulary import Decision, Kind


class Impl(StrEnum):
    """Whose implementation a read selects at a row's cell."""

    ROW = "row"  # the row's implementation
    BASELINE = "baseline"  # the policy's baseline


class Threads(StrEnum):
    """Which thread counts a read selects at a row's cell."""

    ROW = "row"  # the row's count
    EVERY = "every"  # every count (the row is at each side's fastest: any count can become it)


@dataclass(frozen=True, kw_only=True)
class Read:
    """One asv benchmark (``suite.Class.method``) a row reads, at the row's task and scale."""

    benchmark: str
    impl: Impl = Impl.ROW
    threads: Threads = Threads.ROW


@dataclass(frozen=True, kw_only=True)
class Reads:
    """A row kind's declaration: the benchmarks more processes of which decide its rows (``rounds``), and
    whether those processes run on the base too (``base_rounds``: its rows read both commits' own samples)."""

    kind: Kind
    rounds: tuple[Read, ...] = ()
    base_rounds: bool = False


class Selection(NamedTuple):
    """One benchmark at one cell as ``asv run --bench`` selects it (``threads`` None: every count)."""

    benchmark: str
    task: str
    impl: str
    num_envs: int | None
    threads: int | None

    @property
    def suite(self) -> str:
        """The ``module.Class`` it runs (whose seconds per process estimate its rounds)."""
        return ".".join(self.benchmark.split(".")[:2])

    @property
    def pattern(self) -> str:
        """The ``--bench`` regular expression: asv matches ``name(param, ...)``, strings quoted as asv writes
        them; an unset parameter matches any value."""
        impl = r"'[^']+'" if self.impl is None else re.escape(repr(self.impl))
        n = r"\d+" if self.num_envs is None else str(int(self.num_envs))
        t = r"\d+" if self.threads is None else str(int(self.threads))
        return rf"^{re.escape(self.benchmark)}\({re.escape(repr(self.task))}, {impl}, {n}, {t}\)$"


def selections(declared: Reads, row, baseline: str) -> list[Selection]:
    """The selections whose new processes add samples to ``row`` (a ``ComparisonRecord`` or its wire form) of
    the ``declared`` kind."""
    return [
        Selection(
            read.benchmark,
            row.task,
            row.impl if read.impl is Impl.ROW else baseline,
            row.num_envs,
            row.threads if read.threads is Threads.ROW else None,
        )
        for read in declared.rounds
    ]


def open_cells(cells: Iterable, max_rounds: int) -> list:
    """The inconclusive cells (rows: ``ComparisonRecord``, ``gate.api.schemas.ComparisonOut``) that more rounds
    may still decide: fewer processes behind them than the budget (the policy's ``max_rounds``)."""
    return [c for c in cells if c.decision == Decision.INCONCLUSIVE and c.groups < max_rounds]
