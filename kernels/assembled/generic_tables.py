"""The tables every task's ``assembled_generic`` kernel reads its plan from, built in one place.

A generic kernel is compiled once for every plan: the plan reaches it as arrays indexed by library term.

- ``rewards``: weight, active flag, log slot and parameters of every library reward term;
- ``terminations``: active flag and parameters of every library termination term;
- ``observations``: one row per block: a library observation term, its first column in each output group
  (-1: not written there), its noise scale and its first noise column. A term's placements in different groups
  with the same noise share a row (its value is computed once per env, written to each); a placement with
  other noise, or a second one in a group that already has the term, takes a new row.

Parameters are read by name: ``param_column(cls, name)`` is the column of parameter ``name`` of the typed
parameters ``cls`` in a parameter table, the position of that field in the dataclass. A kernel names the
columns it reads as module constants built from it (``SIGMA = param_column(Tracking, "sigma")``), and the
builder fills each column from the parameter of that name, so the two cannot disagree about an order.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numba import njit

import kernels._cache  # noqa: F401  (Numba's cache is configured before a kernel is defined)
from kernels.spec import TaskPlan, TermDef

MAX_GROUPS = 2  # output groups a generic kernel routes observation blocks to (its outs tuple)
IMPL = "the generic assembled kernel"  # how its errors name it (the registry names the implementation)


def param_column(params: type, name: str) -> int:
    """The column of parameter ``name`` of the typed parameters ``params`` in a parameter table."""
    names = [f.name for f in dataclasses.fields(params)]
    if name not in names:
        raise KeyError(f"{params.__name__} has no parameter {name!r}; its parameters are {', '.join(names)}")
    return names.index(name)


def max_params(library: Mapping[str, TermDef]) -> int:
    """The width of a parameter table for ``library``: its widest term's parameter count (at least 1)."""
    return max([1, *(len(dataclasses.fields(d.params)) for d in library.values())])


def _params_row(row: np.ndarray, params: object) -> None:
    for f in dataclasses.fields(params):
        row[param_column(type(params), f.name)] = getattr(params, f.name)


def _check_once(kind: str, fns: Sequence[str]) -> None:
    repeated = sorted({fn for fn in fns if fns.count(fn) > 1})
    if repeated:
        raise ValueError(
            f"{IMPL} runs each library {kind} term at most once per plan; {repeated} appear more than once: "
            "load impl='assembled'"
        )


def check_groups(plan: TaskPlan) -> None:
    if len(plan.observations) > MAX_GROUPS:
        raise ValueError(
            f"{IMPL} routes at most {MAX_GROUPS} observation groups; this plan has "
            f"{len(plan.observations)} ({', '.join(g.name for g in plan.observations)}): merge groups "
            "or load impl='assembled'"
        )


def rewards(plan: TaskPlan, library: Mapping[str, TermDef]) -> tuple[np.ndarray, ...]:
    """(weights, active, slot, params) over ``library``'s reward terms, in its order."""
    _check_once("reward", [r.fn for r in plan.rewards])
    index = {name: k for k, name in enumerate(library)}
    weights = np.zeros(len(library))
    active = np.zeros(len(library), dtype=np.bool_)
    slot = np.zeros(len(library), dtype=np.int64)
    params = np.zeros((len(library), max_params(library)))
    for s, term in enumerate(plan.rewards):
        k = index[term.fn]
        weights[k], active[k], slot[k] = term.weight, True, s
        _params_row(params[k], term.params)
    return weights, active, slot, params


def terminations(plan: TaskPlan, library: Mapping[str, TermDef]) -> tuple[np.ndarray, np.ndarray]:
    """(active, params) over ``library``'s termination terms, in its order."""
    _check_once("termination", [t.fn for t in plan.terminations])
    index = {name: k for k, name in enumerate(library)}
    active = np.zeros(len(library), dtype=np.bool_)
    params = np.zeros((len(library), max_params(library)))
    for term in plan.terminations:
        active[index[term.fn]] = True
        _params_row(params[index[term.fn]], term.params)
    return active, params


@dataclass(frozen=True)
class Routes:
    """One row per block: library term, first column per group, noise scale, first noise column."""

    term: np.ndarray  # (rows,) int64: index into the library's observation terms
    column: np.ndarray  # (rows, MAX_GROUPS) int64, -1: not written to that group
    noise: np.ndarray  # (rows,) float64, the plan's scale (the kernel multiplies by the level)
    noise_column: np.ndarray  # (rows,) int64


def observations(plan: TaskPlan, library: Mapping[str, TermDef], *, repeats: bool = True) -> Routes:
    """The blocks of every observation group of the plan, included groups' columns too. Placements of a term
    with the same noise in different groups share a row; ``repeats=False`` refuses a term placed twice in one
    group (its own terms and those it includes)."""
    check_groups(plan)
    index = {name: k for k, name in enumerate(library)}
    rows: list[list] = []  # [term, columns, noise, noise column]
    for g, group in enumerate(plan.observations):
        for term, column in plan.layout(group.name):
            o = index[term.fn]
            if not repeats and any(r[0] == o and r[1][g] >= 0 for r in rows):
                raise ValueError(
                    f"{IMPL} writes each library observation term once per group; {term.fn!r} appears twice "
                    f"in {group.name!r} (its own terms and any it includes): load impl='assembled'"
                )
            row = next((r for r in rows if r[0] == o and r[1][g] < 0 and r[2] == term.noise), None)
            if row is None:
                row = [o, [-1] * MAX_GROUPS, term.noise, plan.definition(term).noise_column or 0]
                rows.append(row)
            row[1][g] = column
    return Routes(
        term=np.array([r[0] for r in rows], dtype=np.int64).reshape(-1),
        column=np.array([r[1] for r in rows], dtype=np.int64).reshape(-1, MAX_GROUPS),
        noise=np.array([r[2] for r in rows], dtype=np.float64).reshape(-1),
        noise_column=np.array([r[3] for r in rows], dtype=np.int64).reshape(-1),
    )


def outputs(plan: TaskPlan, out: Mapping[str, np.ndarray], spare: np.ndarray) -> tuple[np.ndarray, ...]:
    """The kernel's ``outs`` tuple: one array per group, padded to MAX_GROUPS with an empty ``spare``."""
    return tuple(out[g.name] for g in plan.observations) + (spare,) * (MAX_GROUPS - len(plan.observations))


assert MAX_GROUPS == 2  # the outs tuple of a generic kernel


@njit(inline="always")
def emit(outs, columns, k, value, noise_u, i, noise_column, scale, level):
    """Write column k of a block, noisy if its ``scale`` is not 0, to every group ``columns`` (its row of
    ``Routes.column``) routes it to."""
    if scale != 0.0:
        value += level * (2.0 * noise_u[i, noise_column + k] - 1.0) * scale
    for g in range(MAX_GROUPS):
        if columns[g] >= 0:
            outs[g][i, columns[g] + k] = value
