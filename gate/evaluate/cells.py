"""The cells an evaluation reads: typed keys and an index of one machine and placement's summaries."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import NamedTuple, Protocol

from gate import stats
from gate.domain.vocabulary import Status


class Summary(Protocol):
    """A stored cell summary as the store reads it (``gate.store.queries.summaries``)."""

    benchmark: str
    task: str
    impl: str
    num_envs: int
    threads: int
    status: Status
    message: str
    center: float | None
    se: float | None
    between_se: float | None
    low: float | None
    high: float | None
    samples: int
    groups: int


class Key(NamedTuple):
    """Where a cell is: the asv benchmark and its parameters."""

    benchmark: str
    task: str
    impl: str
    num_envs: int
    threads: int

    @classmethod
    def of(cls, c: Summary) -> Key:
        return cls(c.benchmark, c.task, c.impl, c.num_envs, c.threads)


class Cells(Mapping[Key, Summary]):
    """One machine and placement's cells of one commit, by key."""

    def __init__(self, cells: Mapping[Key, Summary] | None = None):
        self._by: dict[Key, Summary] = dict(cells or {})

    def add(self, c: Summary) -> None:
        self._by[Key.of(c)] = c

    def __getitem__(self, key: Key) -> Summary:
        return self._by[key]

    def __iter__(self) -> Iterator[Key]:
        return iter(self._by)

    def __len__(self) -> int:
        return len(self._by)

    def cell(
        self, benchmark: str, task: str, impl: str, num_envs: int | None, threads: int | None
    ) -> Summary | None:
        return self._by.get(Key(benchmark, task, impl, num_envs, threads))

    def of(self, benchmark: str) -> Iterator[tuple[Key, Summary]]:
        """The cells of one benchmark, in the order they were added."""
        return ((k, c) for k, c in self._by.items() if k.benchmark == benchmark)


def summary_of(c: Summary) -> stats.Summary:
    """The statistics' view of a stored cell summary."""
    return stats.Summary(
        center=c.center,
        se=c.se,
        low=c.low,
        high=c.high,
        samples=c.samples,
        groups=c.groups,
        between_se=c.between_se,
    )


def missing(c: Summary | None, what: str) -> str | None:
    """Why a cell cannot back a row (None: it can)."""
    if c is None:
        return f"no {what} in the store"
    if c.status == Status.INSUFFICIENT:
        return f"{what}: {c.message}"
    if c.status == Status.FAILED:
        return f"{what} failed in asv"
    return None
