"""Headline rows the head inherits from its base: judged on the change, not on what was already there.

An implementation against the baseline (at a thread count, at each one's best count, in the collector) is a
statement about a commit. When the base already fails it, or leaves it undecided, and the head does not make it
worse, the pull request did not cause it: the row passes and says so, with the base's estimate beside the head's.
What the pull request changes is judged by the head-vs-base rows of every implementation. A team that wants every
pull request blocked until the headline holds sets ``inherited_pass = false`` in the policy.

"Not worse": the head's interval is not wholly above the base's for the same row. Two estimates of one ratio
from different processes differ by their noise: holding the head's ratio to the top of the base's interval would
call an unchanged row worse about once in twelve (8% for normal estimates of equal spread; here 1.287 [1.280,
1.296] against a base of the same effect), while two such 95% intervals lie apart this way about once in 350. A
head wholly past the base's interval is judged on its own, as every row of a head whose base has no such row.
"""

from __future__ import annotations

from gate.domain.vocabulary import Decision, Kind, Signal
from gate.evaluate.row import Row, join

KINDS = (Kind.IMPL_VS_BASELINE, Kind.BEST_THREADS, Kind.COLLECTOR_VS_BASELINE)
_OPEN = (Decision.FAIL, Decision.INCONCLUSIVE)


def _key(row: Row) -> tuple:
    # at each implementation's best count, the counts may differ between base and head: the row is the scale's
    threads = None if row.kind == Kind.BEST_THREADS else row.threads
    return (row.kind, row.task, row.impl, row.baseline, row.num_envs, threads)


def apply(rows: list[Row], base_rows: list[Row], *, min_groups: int = 2) -> int:
    """Pass every headline row of ``rows`` (one machine and placement's) that ``base_rows`` (the same machine and
    placement's, decided on the base's cells) already failed or left undecided and that the head does not make
    worse, both with at least ``min_groups`` processes behind their estimates (too few say nothing of either);
    returns how many."""
    base = {_key(r): r for r in base_rows if r.kind in KINDS}
    passed = 0
    for row in rows:
        was = base.get(_key(row)) if row.kind in KINDS and row.decision in _OPEN else None
        if (
            was is None
            or was.decision not in _OPEN
            or None in (row.ratio, row.low, row.high, was.ratio, was.low, was.high)
        ):
            continue
        if min(row.groups, was.groups) < min_groups:
            continue
        if row.low > was.high:  # wholly above the base's interval: made worse
            continue
        row.reason = join(
            f"as on the base, {was.decision} at {was.ratio:.3f} [{was.low:.3f}, {was.high:.3f}], and not made worse "
            f"by the head ({row.ratio:.3f} [{row.low:.3f}, {row.high:.3f}]): passed, the change is judged by the head-vs-base rows",
            row.reason,
        )
        row.decision, row.signal = Decision.PASS, Signal.BASE
        passed += 1
    return passed
