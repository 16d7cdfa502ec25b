"""(base, head) -> verdict from the store: the row kinds per machine and placement, decided and tallied."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from sqlalchemy.orm import Session

from gate.domain.evaluations import Acceptance, ComparisonRecord
from gate.domain.vocabulary import Decision, Verdict
from gate.evaluate import (
    accepted,
    best_threads,
    collector_head_vs_base,
    collector_vs_baseline,
    correctness,
    head_vs_base,
    impl_vs_baseline,
    inherited,
    machine,
    meter,
    paired_head_vs_base,
    tally,
)
from gate.evaluate.cells import Cells
from gate.evaluate.context import Context, NoiseFloors
from gate.evaluate.row import Row, join
from gate.lineage import Lineage
from gate.policy import Policy
from gate.store import queries

# The headline kinds: implementations against the baseline within one commit (inherited from the base when
# the head does not make them worse).
HEADLINE = (impl_vs_baseline, best_threads, collector_vs_baseline)
# The row kinds judged per machine and placement, in the order their rows are shown.
KINDS = (
    correctness,
    impl_vs_baseline,
    best_threads,
    collector_vs_baseline,
    head_vs_base,
    paired_head_vs_base,
    collector_head_vs_base,
)


@dataclass(kw_only=True)
class Outcome:
    verdict: Verdict
    reasons: list[str]
    comparisons: list[ComparisonRecord]
    policy_source: str
    policy: dict = field(default_factory=dict)
    acceptances: list[Acceptance] = field(
        default_factory=list
    )  # on record for the head, with their rows counted


def same_sources(head_runs: list[dict], base_runs: list[dict]) -> dict[str, str]:
    """``task/impl`` -> kernel id, for the kernels whose id (``gate.provenance_kernels.kernel_ids``) every run of
    the head and of the base recorded, and recorded the same: the head runs the base's sources for them."""
    runs = [*head_runs, *base_runs]
    if not head_runs or not base_runs or not all(r.get("kernels") for r in runs):
        return {}
    first = runs[0]["kernels"]
    return {k: v for k, v in first.items() if all(r["kernels"].get(k) == v for r in runs)}


def changed_sources(head_runs: list[dict], base_runs: list[dict]) -> frozenset[str]:
    """``task/impl`` of the kernels whose id every run of the head and of the base recorded, not all the same: the
    head changed their sources. A kernel some run did not record is in neither this nor ``same_sources``."""
    runs = [*head_runs, *base_runs]
    if not head_runs or not base_runs or not all(r.get("kernels") for r in runs):
        return frozenset()
    same = same_sources(head_runs, base_runs)
    recorded = set.intersection(*(set(r["kernels"]) for r in runs))
    return frozenset(recorded - set(same))


def evaluate(
    session: Session,
    *,
    base_sha: str,
    head_sha: str,
    policy: Policy,
    policy_source: str,
    extra_impls: Iterable[str] = (),
    lineage: Lineage | None = None,
    acceptances: Sequence[Acceptance] = (),
) -> Outcome:
    """The verdict on (base, head) from the store; ``lineage`` (git's view of the pair, ``gate.lineage``) adds
        the rows about how the head was measured, and lets a head whose subject is the base's be judged on the base's
        results. ``acceptances`` (the head's, ``gate.acceptance``: of the pull request's head when the head judged is it
    merged into the base) accept the failing rows they cover."""
    compare = tuple(dict.fromkeys((*(policy.compare or ()), *extra_impls)))
    extra = set(compare) - set(policy.compare or ())  # --impl only: a family of its own (tally)
    same = base_sha == head_sha
    head_cells = queries.summaries(session, commit_sha=head_sha)
    base_cells = [] if same else queries.summaries(session, commit_sha=base_sha)
    head_runs = queries.provenances(session, commit_sha=head_sha)
    base_runs = {} if same else queries.provenances(session, commit_sha=base_sha)
    reasons = [
        f"policy: {policy_source}" + (f", plus --impl {', '.join(extra_impls)}" if extra_impls else "")
    ]
    reused = meter.reused(lineage, head_cells, base_cells, head_runs, base_runs, base_sha, reasons)
    reported = sorted({m for m, _, _, _ in head_cells} | {m for m, _ in head_runs})
    required = list(policy.required_machines) or reported
    if not required:
        reasons.append(f"no results for head {head_sha[:12]} on any machine: nothing was measured")
    rows: list[Row] = machine.missing(required, reported, head_sha)
    floors = NoiseFloors(session, required)
    base_by: dict[tuple[str, str], Cells] = defaultdict(Cells)
    for m, placement, _label, c in base_cells:
        base_by[(m, placement)].add(c)
    head_by: dict[tuple[str, str], Cells] = defaultdict(Cells)
    labels = {}
    for m, placement, label, c in head_cells:
        if m in required:
            head_by[(m, placement)].add(c)
            labels[placement] = label
    if same:
        reasons.append("base and head are the same commit: no head-vs-base comparison")
    else:
        rows += machine.hardware_changes(
            queries.fingerprints(session, commit_sha=base_sha),
            queries.fingerprints(session, commit_sha=head_sha),
            required,
        )
    if lineage is not None and not same:
        rows += meter.rows(
            lineage,
            head_runs,
            base_runs,
            required,
            labels,
            base_sha=base_sha,
            head_sha=head_sha,
            head_software=queries.softwares(session, commit_sha=head_sha) if lineage.pin_changes else None,
        )
    judged_runs = {**{key: base_runs.get(key, []) for key in reused}, **head_runs}
    rows += meter.baselines(judged_runs, required, labels, policy.baseline)
    dropped: list[str] = []
    groups: list[tuple[tuple[str, str], list[Row]]] = []  # each machine and placement's rows
    changed_by: dict[
        tuple[str, str], frozenset[str]
    ] = {}  # the kernels the head changed, per machine/placement
    for (m, placement), cells in sorted(head_by.items()):
        changed_by[m, placement] = changed_sources(
            head_runs.get((m, placement), []), base_runs.get((m, placement), [])
        )
        ctx = Context(
            machine=m,
            placement=labels[placement],
            cells=cells,
            policy=policy,
            compare=compare,
            floors=floors,
            versus_base=not same and (m, placement) not in reused,
            base=base_by.get((m, placement)),
            base_sha=base_sha,
            lockstep=any(r.get("against") == base_sha for r in head_runs.get((m, placement), [])),
            same_sources=same_sources(head_runs.get((m, placement), []), base_runs.get((m, placement), []))
            if policy.same_sources_pass
            else {},
            changed=changed_by[m, placement],
            dropped=dropped,
        )
        group = [r for kind in KINDS for r in kind.rows(ctx)]
        rows += group
        groups.append(((m, placement), group))
    if dropped:
        shown = ", ".join(dropped[:4]) + (f" and {len(dropped) - 4} more" if len(dropped) > 4 else "")
        reasons.append(
            f"{len(dropped)} cell(s) measured on base are not in the head's benchmark profile, not compared: {shown}"
        )
    rows += machine.nothing_compared(rows, sorted(set(required) & set(reported)))
    tally.decide(rows, policy, extra=extra)
    if policy.inherited_pass and not same:
        _inherit(groups, base_by, labels, policy, compare, extra, floors, reasons)
    for key, group in groups:
        _new_baseline(group, changed_by[key], policy.baseline)
    applied = accepted.apply(rows, acceptances, reasons)
    verdict = tally.verdict(rows, reasons)
    return Outcome(
        verdict=verdict,
        reasons=reasons,
        comparisons=[r.record() for r in rows],
        policy_source=policy_source,
        policy=policy.to_dict(),
        acceptances=applied,
    )


def _new_baseline(group: list[Row], changed: frozenset[str], baseline: str) -> None:
    """Say so on each headline row still open where the head changed the baseline: it judges the implementation
    against the new baseline (a faster baseline can leave an unchanged implementation behind it)."""
    for r in group:
        if (
            r.kind in inherited.KINDS
            and r.decision in (Decision.FAIL, Decision.INCONCLUSIVE)
            and f"{r.task}/{baseline}" in changed
        ):
            r.reason = join(
                r.reason,
                f"the head changes the baseline {baseline} of {r.task}: this row judges {r.impl} against the "
                f"new {baseline}, whatever {r.impl}'s own change",
            )


def _inherit(groups, base_by, labels, policy: Policy, compare, extra, floors, reasons: list[str]) -> None:
    """Pass the headline rows each machine and placement's base already failed or left undecided and the head
    does not make worse (``gate.evaluate.inherited``)."""
    pairs = []
    for key, group in groups:
        if key in base_by:
            ctx = Context(
                machine=key[0],
                placement=labels[key[1]],
                cells=base_by[key],
                policy=policy,
                compare=compare,
                floors=floors,
            )
            pairs.append((group, [r for kind in HEADLINE for r in kind.rows(ctx)]))
    tally.decide([r for _, base in pairs for r in base], policy, extra=extra)
    if n := sum(inherited.apply(group, base, min_groups=policy.min_rounds) for group, base in pairs):
        reasons.append(
            f"{n} headline row(s) failed or undecided on the base as on the head, not made worse by it: passed "
            "(the policy's inherited_pass)"
        )
