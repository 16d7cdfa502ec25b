"""The gate's evaluation: (base, head) -> approve / reject / inconclusive / error, with a row per cell.

One module per row kind (``gate.domain.vocabulary.Kind``), each ``rows(context) -> list[Row]`` over one machine
and placement's cells (``context``, ``cells``); ``cost`` attaches the exact cost signal to a measured row, ``explain``
combines a row's signals (the rule: ``gate.stats.signals``), ``tally`` decides each family under false-discovery
control and counts the verdict; ``accepted`` accepts the fails a maintainer accepted on record (``gate.acceptance``); ``evaluation`` runs them over the store's cells. docs/gate.md says what each
kind compares.

Comparisons across processes never use a margin below the machine's A/A noise floor (``NoiseFloors``). Missing
data is an error, never a pass: a required machine without results, a cell without samples, a base without
results. Storing verdicts and calibrating floors are use cases of ``gate.services``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from pathlib import Path

from sqlalchemy.orm import Session

from gate import lineage as lineages
from gate import policy as policies
from gate.domain.evaluations import Acceptance
from gate.domain.vocabulary import Verdict
from gate.evaluate.cells import summary_of
from gate.evaluate.context import NoiseFloors, cost_design
from gate.evaluate.evaluation import Outcome, evaluate
from gate.evaluate.row import Row

__all__ = ["NoiseFloors", "Outcome", "Row", "cost_design", "evaluate", "judge", "summary_of"]

log = logging.getLogger("fusegate")


def judge(
    session: Session,
    *,
    repo: Path,
    base_sha: str,
    head_sha: str,
    extra_impls: Iterable[str] = (),
    policy_sha: str | None = None,
    acceptances: Sequence[Acceptance] = (),
) -> Outcome:
    """Evaluate with the policy of the base commit (or ``policy_sha``), with the head's ``acceptances`` on record:
    reads only, so on SQLite it runs beside writers. Anything that goes wrong is an error verdict that says what:
    never a pass."""
    try:
        policy, source = policies.read_from_base(repo, policy_sha or base_sha)
    except policies.PolicyError as exc:
        return Outcome(
            verdict=Verdict.ERROR, reasons=[f"policy: {exc}"], comparisons=[], policy_source=str(exc)
        )
    try:
        return evaluate(
            session,
            base_sha=base_sha,
            head_sha=head_sha,
            policy=policy,
            policy_source=source,
            extra_impls=extra_impls,
            lineage=lineages.of(repo, base_sha, head_sha) if base_sha != head_sha else None,
            acceptances=acceptances,
        )
    except Exception as exc:  # fail closed, and say why
        log.exception("evaluation of %s -> %s failed", base_sha, head_sha)
        return Outcome(
            verdict=Verdict.ERROR,
            reasons=[f"policy: {source}", f"the evaluation failed: {type(exc).__name__}: {exc}"],
            comparisons=[],
            policy_source=source,
            policy=policy.to_dict(),
        )
