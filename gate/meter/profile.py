"""What a benchmark run measures: the ``FUSEGATE_BENCH_*`` settings, read once into one typed object.

The asv suites (``benchmarks/_common.py``) read it when asv imports them; ``fusegate measure`` and ``gate
--measure`` read it to plan their asv calls, and a machine's plan (``gate.meter.plan``) writes it into the
environment of the benchmarks it starts. Every name, default and reader is in docs/settings.md. A bad value is a
``ProfileError`` naming the variable, the value and what it takes, before anything is measured.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Literal

from gate.domain.selection import PAIRED_ROUNDS

PREFIX = "FUSEGATE_BENCH_"


class ProfileError(ValueError):
    """A ``FUSEGATE_BENCH_*`` value this meter cannot use."""


def _ints(name: str, text: str) -> tuple[int, ...]:
    try:
        values = tuple(int(v) for v in text.split(","))
    except ValueError:
        raise ProfileError(f"{name}={text!r}: expected comma-separated whole numbers, e.g. 1,2,4") from None
    if any(v < 1 for v in values):
        raise ProfileError(f"{name}={text!r}: every value must be at least 1")
    return values


def _count(name: str, text: str) -> int:
    values = _ints(name, text)
    if len(values) != 1:
        raise ProfileError(f"{name}={text!r}: expected one whole number")
    return values[0]


def _whole(name: str, text: str) -> int:
    if not text.strip().isdigit():
        raise ProfileError(f"{name}={text!r}: expected one whole number, 0 or more")
    return int(text)


def _names(name: str, text: str) -> tuple[str, ...]:
    values = tuple(v.strip() for v in text.split(",") if v.strip())
    if not values:
        raise ProfileError(f"{name}={text!r}: expected comma-separated names")
    return values


def _choice(name: str, text: str, allowed: tuple[str, ...]) -> str:
    if text not in allowed:
        raise ProfileError(f"{name}={text!r}: expected one of {', '.join(allowed)}")
    return text


def _flag(name: str, text: str) -> bool:
    return _choice(name, text, ("0", "1")) == "1"


def _variable(field: str) -> str:
    return PREFIX + ("PROFILE" if field == "name" else field.upper())


@dataclass(frozen=True, kw_only=True)
class Profile:
    """One benchmark run's settings. ``None`` on an axis: the profile's own grid (``benchmarks/_common.py``)."""

    name: Literal["quick", "full"] = "quick"  # PROFILE: two scales at 1 thread and every CPU, or the curve
    threads: tuple[int, ...] | None = None  # THREADS
    tasks: tuple[str, ...] | None = None  # TASKS
    impls: tuple[str, ...] | None = None  # IMPLS
    envs: tuple[int, ...] | None = None  # ENVS
    paired_impls: tuple[str, ...] | None = None  # PAIRED_IMPLS
    collector_envs: tuple[int, ...] | None = None  # COLLECTOR_ENVS
    layout: Literal["random", "fixed"] = "random"  # LAYOUT: the snapshot's cache-line offsets per process
    hot_rounds: int = 6  # HOT_ROUNDS: HotSlice processes per cell
    paired_rounds: int = PAIRED_ROUNDS  # PAIRED_ROUNDS: Paired processes per cell
    tracks: bool | None = None  # TRACKS: the track_ suites (default: the full profile only)
    against: str | None = None  # AGAINST: the base tree a head is timed against in lockstep
    against_commit: str | None = None  # AGAINST_COMMIT
    against_python: str | None = None  # AGAINST_PYTHON: the interpreter of the base's lockstep worker
    tree: str | None = None  # TREE: the tree measured (gate.meter.subject.root), e.g. a team's repository
    duet_rounds: int = 3  # DUET_ROUNDS: worker pairs per lockstep pass
    duet_more: int = 3  # DUET_MORE: further worker pairs over the cells whose time is in question (0: none)
    duet_cells: str | None = None  # DUET_CELLS: "task/impl/num_envs/threads,..." when only some need samples
    gate: bool = (
        False  # GATE: fusegate runs asv for the gate (set by its asv calls), else asv's own rule judges
    )

    @property
    def with_tracks(self) -> bool:
        return self.name == "full" if self.tracks is None else self.tracks

    @classmethod
    def variables(cls) -> tuple[str, ...]:
        return tuple(_variable(f.name) for f in fields(cls))

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Profile:
        env = os.environ if environ is None else environ
        parse = {
            "name": lambda n, t: _choice(n, t, ("quick", "full")),
            "threads": _ints,
            "tasks": _names,
            "impls": _names,
            "envs": _ints,
            "paired_impls": _names,
            "collector_envs": _ints,
            "layout": lambda n, t: _choice(n, t, ("random", "fixed")),
            "hot_rounds": _count,
            "paired_rounds": _count,
            "tracks": _flag,
            "against": lambda n, t: t,
            "against_commit": lambda n, t: t,
            "against_python": lambda n, t: t,
            "tree": lambda n, t: t,
            "duet_rounds": _count,
            "duet_more": _whole,
            "duet_cells": lambda n, t: t,
            "gate": _flag,
        }
        values = {}
        for f in fields(cls):
            variable = _variable(f.name)
            text = env.get(variable) or None
            if text is not None:
                values[f.name] = parse[f.name](variable, text)
        return cls(**values)

    def env(self, *names: str) -> dict[str, str]:
        """The variables that give this profile to a benchmark process: the named fields always, else every
        field that is not its default."""
        default = Profile()
        out = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if (f.name not in names) if names else (value == getattr(default, f.name)):
                continue
            if isinstance(value, tuple):
                out[_variable(f.name)] = ",".join(map(str, value))
            elif isinstance(value, bool):
                out[_variable(f.name)] = "1" if value else "0"
            elif value is not None:
                out[_variable(f.name)] = str(value)
        return out
