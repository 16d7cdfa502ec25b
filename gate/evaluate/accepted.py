"""Regressions accepted on record (``gate.acceptance``): a failing row of an accepted cell becomes ``accepted``
while it is no worse than when accepted; worse, it stays a fail and says so."""

from __future__ import annotations

from collections.abc import Sequence

from gate import acceptance
from gate.domain.evaluations import Acceptance, Cell
from gate.domain.vocabulary import Decision
from gate.evaluate.row import Row, join


def apply(rows: list[Row], acceptances: Sequence[Acceptance], reasons: list[str]) -> list[Acceptance]:
    """Accept the decided rows the acceptances cover; returns every acceptance with its rows counted."""
    if not acceptances:
        return []
    by = acceptance.newest(acceptances)
    took: dict[Cell, list[int]] = {k: [0, 0] for k in by}
    for r in rows:
        a, worse = acceptance.judged(r, by)
        if a is None:
            continue
        if worse:
            took[acceptance.key(a)][1] += 1
            r.reason = join(r.reason, acceptance.worse_text(a))
        else:
            took[acceptance.key(a)][0] += 1
            r.decision = Decision.ACCEPTED
            r.reason = join(acceptance.accepted_text(a), r.reason)
    n, m = sum(t[0] for t in took.values()), sum(t[1] for t in took.values())
    if n or m:
        reasons.append(
            f"{n} failing row(s) accepted on record"
            + (f", {m} worse than when accepted (still fails)" if m else "")
            + f" ({len(by)} acceptance(s) for this head)"
        )
    return [acceptance.counted(a, accepted=took[k][0], worse=took[k][1]) for k, a in by.items()]
