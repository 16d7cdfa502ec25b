"""The "results arrived" use case, one function for every way results come in (``POST /api/runs``,
``fusegate ingest``, ``fusegate run``): store the runs in one transaction, queue the PR bot's checks that involve
their commits, evaluate again every stored (base, head) that reads them, and wake the bot."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from gate.domain.evaluations import EvaluationRecord
from gate.domain.uploads import RunRecord
from gate.ingest import asv_dir, bundle
from gate.services import verdicts
from gate.store import db, pulls, queries


@dataclass(frozen=True, kw_only=True)
class Arrival:
    reports: dict[str, queries.IngestReport]  # per machine
    evaluations: list[EvaluationRecord] = field(default_factory=list)  # recomputed: their commits changed

    @property
    def stored(self) -> int:
        return sum(r.stored for r in self.reports.values())

    @property
    def unchanged(self) -> int:
        return sum(r.unchanged for r in self.reports.values())

    @property
    def results(self) -> int:
        return sum(r.results for r in self.reports.values())


def arrived(
    url: str, *, repo: Path, runs: Sequence[RunRecord], wake: Callable[[], None] | None = None
) -> Arrival:
    """Store validated runs (all of them or, on any error, none), then re-evaluate what they change.

    The bot's checks are queued in the same transaction as the results, so a retried upload that finds them
    stored is covered too; ``wake`` (the in-process bot's) runs after the evaluations, so it finds them fresh.
    A bot in another process polls the queue.
    """
    by_machine: dict[str, list[RunRecord]] = defaultdict(list)
    for run in runs:
        by_machine[run.machine].append(run)
    with db.transaction(url) as session:
        reports = {m: queries.ingest_runs(session, runs=rs) for m, rs in by_machine.items()}
        checks = pulls.checks_with_commits(session, shas={r.commit for r in runs})
        pulls.enqueue(session, check_ids=checks, reason="upload")
    evaluations = []
    if any(r.stored for r in reports.values()):
        with db.transaction(url, write=False) as session:  # a pair with both commits uploaded, once
            pairs = {
                p
                for sha in {r.commit for r in runs}
                for p in queries.evaluation_pairs(session, commit_sha=sha)
            }
        for base, head in sorted(pairs):
            evaluations.append(verdicts.reevaluate(url, repo=repo, base_sha=base, head_sha=head))
    if wake is not None:
        wake()
    return Arrival(reports=reports, evaluations=evaluations)


def arrived_from_directory(
    url: str,
    *,
    repo: Path,
    results: Path,
    sidecar: Path | None = None,
    wake: Callable[[], None] | None = None,
) -> Arrival:
    """``arrived`` for every machine of an asv results directory (and the sidecar beside it), validated whole
    before anything is stored."""
    runs = [run for b in asv_dir.read(results, sidecar=sidecar) for run in bundle.runs(b)]
    return arrived(url, repo=repo, runs=runs, wake=wake)
