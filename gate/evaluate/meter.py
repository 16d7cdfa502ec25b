"""``meter`` rows: how each machine measured the head (and the base), from the runs' provenance
(``gate.lineage.findings``); and where a head whose subject is the base's is judged on the base's results."""

from __future__ import annotations

from gate.domain.vocabulary import Decision, Kind
from gate.evaluate.reads import Reads
from gate.evaluate.row import Row
from gate.lineage import Lineage, findings, pin_findings

READS = Reads(kind=Kind.METER)  # provenance: no benchmark processes decide it


def rows(
    lineage: Lineage,
    head_runs: dict,
    base_runs: dict,
    required: list[str],
    labels: dict,
    *,
    base_sha: str,
    head_sha: str,
    head_software: dict | None = None,
) -> list[Row]:
    """The lineage's findings per machine and placement the head ran at; ``head_software``: (machine, placement)
    -> the software fingerprint of each of the head's runs there (``queries.softwares``)."""
    out = []
    for (machine, placement), runs in sorted(head_runs.items()):
        if machine not in required:
            continue
        found = findings(lineage, runs, side="head", sha=head_sha, base_sha=base_sha)
        found += pin_findings(
            lineage, (head_software or {}).get((machine, placement), []), sha=head_sha, base_sha=base_sha
        )
        found += findings(
            lineage, base_runs.get((machine, placement), []), side="base", sha=base_sha, base_sha=base_sha
        )
        out += [
            Row(
                machine=machine,
                kind=Kind.METER,
                baseline="base",
                detail=labels.get(placement, ""),
                decision=f.decision,
                reason=f.reason,
            )
            for f in found
        ]
    return out


def reused(
    lineage: Lineage | None,
    head_cells: list,
    base_cells: list,
    head_runs: dict,
    base_runs: dict,
    base_sha: str,
    reasons: list[str],
) -> set[tuple[str, str]]:
    """Where the head has no runs but its subject is the base's (and the base's runs say they measured that
    subject): the base's cells stand for the head's there (added to ``head_cells``). Returns those (machine,
    placement)s."""
    if lineage is None or not lineage.same_subject or not base_cells:
        return set()
    measured = {(m, p) for m, p, _, _ in head_cells} | set(head_runs)
    subject = lineage.base["subject"]
    reusable = {
        key
        for key, runs in base_runs.items()
        if key not in measured and runs and all(r.get("subject") == subject for r in runs)
    }
    head_cells += [row for row in base_cells if (row[0], row[1]) in reusable]
    if reusable:
        machines = ", ".join(sorted({m for m, _ in reusable}))
        reasons.append(
            f"the head's subject is the base's (kernels/ and dependency pins {subject}) and so is its meter: judged "
            f"on base {base_sha[:12]}'s results on {machines}, nothing measured again"
        )
    return reusable


def baselines(runs: dict, required: list[str], labels: dict, baseline: str) -> list[Row]:
    """An error row per machine and placement whose paired results were measured against another implementation
    than the policy's ``baseline``: its implementation-vs-baseline rows would judge against the wrong kernel.
    ``runs``: the provenance of the runs judged there (the head's, or the base's where they stand for it)."""
    out = []
    for (machine, placement), found in sorted(runs.items()):
        paired = sorted({r["baseline"] for r in found if r.get("baseline")})
        if machine not in required or not paired or paired == [baseline]:
            continue
        out.append(
            Row(
                machine=machine,
                kind=Kind.METER,
                baseline=baseline,
                detail=labels.get(placement, ""),
                decision=Decision.ERROR,
                reason=(
                    f"the paired results here were measured against {', '.join(paired)}, and the policy's baseline "
                    f"is {baseline}: implementation-vs-baseline rows would judge against the wrong kernel. Set "
                    f'baseline = "{paired[0]}" in the base\'s fusegate-policy.toml, or measure with a meter that '
                    f"pairs against {baseline}"
                ),
            )
        )
    return out
