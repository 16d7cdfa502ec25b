"""The subject this meter measures, as its tree declares it: the registry of its tasks and each task's meter parts.

Every meter module and asv suite asks here for the tasks, their implementations and reference, the baseline and
the grid (the declaration, ``gate.subject``), a task's synthetic snapshots, parity tolerances and cost weights
(its ``meter.py``, read from the base like the rest of the meter: ``gate.provenance``) and its collector env. The
meter names no task and no implementation of its own.

The tree being measured (``root``): ``$FUSEGATE_BENCH_TREE`` when set (``gate.meter.profile``'s ``tree``: fusegate's
asv calls set it, the asv suites set it to their tree, each lockstep worker and cost process is given its own
tree's), else the checkout this meter was imported from when it declares a subject (this repository, and every
measurement tree of it: the meter runs in the tree it measures), else the working directory.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from types import ModuleType

from gate import subject as declared
from gate.meter.profile import PREFIX
from kernels.registry import Registry

VARIABLE = PREFIX + "TREE"  # the Profile's ``tree``, read here alone: a meter module needs no other setting
_CHECKOUT = Path(__file__).resolve().parents[2]


def root() -> Path:
    """The tree whose subject this process measures (module docstring)."""
    if os.environ.get(VARIABLE):
        return Path(os.environ[VARIABLE]).resolve()
    return _CHECKOUT if _checkout_declares() else Path.cwd().resolve()


@functools.cache
def _checkout_declares() -> bool:
    """Whether the checkout this meter was imported from declares a subject (read once per process)."""
    try:
        _declaration(_CHECKOUT)
    except declared.SubjectError:
        return False
    return True


def declaration(at: Path | str | None = None) -> declared.Subject:
    """The subject the tree at ``at`` (default ``root()``) declares (``gate.subject.SubjectError`` if none)."""
    return _declaration(Path(at).resolve() if at is not None else root())


@functools.cache
def _declaration(at: Path) -> declared.Subject:
    return declared.read(at)


def registry(at: Path | str | None = None) -> Registry:
    """The registry of the tasks the tree at ``at`` (default ``root()``) declares, made once per process."""
    return _registry(declaration(at).tasks)


@functools.cache
def _registry(package: str) -> Registry:
    return Registry(package)


def meter(task: str) -> ModuleType:
    """``task``'s part of the meter: its ``meter.py`` (snapshots, tolerances, cost weights)."""
    return registry().meter(task)


def make_inputs(task: str, num_envs: int, seed: int = 0) -> dict:
    """A deterministic synthetic snapshot of ``task`` (spec E4): its input and state arrays, by spec E name."""
    import numpy as np

    if isinstance(num_envs, bool) or not isinstance(num_envs, int | np.integer) or num_envs < 1:
        raise ValueError(f"num_envs must be a positive integer, got {num_envs!r}")
    return meter(task).make_inputs(int(num_envs), seed)


def reads(task: str) -> tuple[str, ...]:
    """The snapshot arrays ``task``'s kernels read (a bench cell's bytes per call): ``READS`` of the task's
    constants when it declares one, else every snapshot array of its contract."""
    found = getattr(registry().task_module(task), "READS", None)
    return tuple(found) if found is not None else tuple(s.name for s in registry().contract(task).snapshot)


def tolerance(task: str) -> tuple[float, float]:
    """(ATOL, RTOL) of ``task``'s parity check (spec E5): floats within ATOL + RTOL * |reference|."""
    found = meter(task)
    return float(found.ATOL), float(found.RTOL)


def cost_per_env(task: str, impl: str) -> int | None:
    """Instructions per env and call of ``impl``'s ``task`` kernel under callgrind (``COST_PER_ENV`` of the
    task's meter.py: the implementation's, else any fused kernel's, None when the task gives neither)."""
    weights = getattr(meter(task), "COST_PER_ENV", {})
    found = weights.get(impl, weights.get(None))
    return None if found is None else int(found)


def problems(at: Path | str | None = None) -> list[str]:
    """What in the declaration the registry contradicts (a baseline or paired implementation no task has), one
    sentence each; empty when they agree."""
    found = declaration(at)
    impls = registry(at).impls
    named = [("baseline", found.baseline)] + [
        (f"grid.{profile}.paired", impl) for profile, grid in found.grid for impl in grid.paired
    ]
    return [
        f"{found.source}: {key} names {impl!r}, which no task implements (implementations: {', '.join(impls)})"
        for key, impl in named
        if impl not in impls
    ]
