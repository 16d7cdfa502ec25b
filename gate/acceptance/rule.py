"""What an acceptance does to a row (``gate.acceptance``): the newest of a cell holds, a failing row no worse
than when accepted is accepted, a worse one fails again; some kinds never."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace

from gate.acceptance.command import key
from gate.domain.evaluations import Acceptance, Cell
from gate.domain.vocabulary import Decision, Kind

NEVER = frozenset({Kind.CORRECTNESS, Kind.METER, Kind.MACHINE})  # rows no acceptance can pass


def newest(acceptances: Iterable[Acceptance]) -> dict[Cell, Acceptance]:
    """The acceptance that holds per cell: the newest of each (a fail worse than accepted can be accepted again)."""
    out: dict[Cell, Acceptance] = {}
    for a in sorted(acceptances, key=lambda a: a.accepted_at):
        out[key(a)] = a
    return out


def worse(a: Acceptance, row) -> bool:
    """Whether ``row`` is worse than when ``a`` accepted it: its time interval wholly above the accepted upper
    bound, or its cost ratio above the accepted one by more than the row's margin."""
    if a.high is not None and row.low is not None and row.low > a.high:
        return True
    return (
        a.cost_ratio is not None
        and row.cost_ratio is not None
        and row.cost_ratio > a.cost_ratio * (1 + row.margin)
    )


def judged(row, by: Mapping[Cell, Acceptance]) -> tuple[Acceptance | None, bool]:
    """(the acceptance of a failing row's cell, whether the row is worse than it); (None, False) for a row that
    does not fail, is never accepted, or has no acceptance."""
    if row.decision != Decision.FAIL or row.kind in NEVER:
        return None, False
    a = by.get(key(row))
    return a, a is not None and worse(a, row)


def accepted_text(a: Acceptance) -> str:
    return f"accepted on record by @{a.login} for head {a.head_sha[:12]}: {a.reason}"


def worse_text(a: Acceptance) -> str:
    then = f"time up to {a.high:.3f}" if a.high is not None else ""
    then += (", " if then else "") + (f"cost {a.cost_ratio:.4f}" if a.cost_ratio is not None else "")
    return (
        f"worse than accepted by @{a.login} ({then or 'no figure'}): a fail again; accept it again "
        "at its new figure, or fix it"
    )


def counted(a: Acceptance, *, accepted: int, worse: int) -> Acceptance:
    """``a`` as an evaluation keeps it: with how many of its rows it accepted and how many were worse."""
    return replace(a, accepted=accepted, worse=worse)
