"""What measured a head's results, and whether it had to be measured at all.

From git: the ``gate.provenance`` ids of the base and head commits (their subject and meter) and the meter files
the head changes. From the store: the provenance each run recorded (the ids of the tree it ran in). Together:

- a head measured with another meter than the base's is an **error** (its results could come from its own edit of
  the meter), and so is one whose records cannot say which meter measured it while the head edits the meter;
- a head that edits the meter but was measured with the base's gets a **pass** row saying which files: its
  verdict is the base meter's, and its own meter measures once it has merged;
- a run whose meter could not measure the subject (a renamed registry function, a new task: the meter's
  ``problems``) is an **error** naming what;
- a head whose subject is the base's (same ids: ``kernels/`` and the dependency pins) needs no measurement: its
  verdict comes from the base's results (``same_subject``);
- a head that changes the dependency pins gets a **pass** row naming them when its runs' software fingerprint
  shows the versions it pins, and an **error** when it shows others (it ran with the base's dependencies).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from gate import git, provenance
from gate.stats import Decision


@dataclass(frozen=True, kw_only=True)
class Lineage:
    base: dict[str, str]  # provenance ids of the base commit
    head: dict[str, str]  # of the head commit
    meter_changes: tuple[str, ...] = ()  # meter files the head changes
    pin_changes: tuple[
        provenance.PinChange, ...
    ] = ()  # how the head's dependency pins differ from the base's

    @property
    def same_subject(self) -> bool:
        return self.base.get("subject") == self.head.get("subject") is not None


@dataclass(frozen=True, kw_only=True)
class Finding:
    decision: Decision
    reason: str


def of(repo: Path, base_sha: str, head_sha: str) -> Lineage | None:
    """The lineage of a (base, head) pair, or None when git cannot read one of them."""
    files = {sha: git.files(repo, sha) for sha in (base_sha, head_sha)}
    if not all(files.values()):
        return None
    pins = {sha: git.show(repo, sha, provenance.PINS) for sha in files}
    tables = {sha: git.show(repo, sha, provenance.DECLARATION) for sha in files}
    ids = {sha: provenance.of_commit(f, pins[sha], tables[sha]) for sha, f in files.items()}
    layouts = {sha: provenance.layout(pins[sha], tables[sha]) for sha in files}
    changes = provenance.meter_changes(
        git.changed(repo, base_sha, head_sha), layouts[base_sha], layouts[head_sha]
    )
    changes += provenance.meter_pin_changes(pins[base_sha], pins[head_sha])
    return Lineage(
        base=ids[base_sha],
        head=ids[head_sha],
        meter_changes=changes,
        pin_changes=provenance.pin_changes(pins[base_sha], pins[head_sha]),
    )


def pin_findings(lineage: Lineage, software: list[dict], *, sha: str, base_sha: str) -> list[Finding]:
    """What the head's runs' software fingerprints (``software``, one per run) say about the pins it changes: an
    exact pin of a distribution the fingerprint records must be the version that ran."""
    if not lineage.pin_changes or not software:
        return []
    exact = {c.name: c.pinned for c in lineage.pin_changes if c.pinned}
    ran = {name: sorted({str(s[name]) for s in software if name in s}) for name in exact}
    wrong = {name: found for name, found in ran.items() if found and found != [exact[name]]}
    pins = ", ".join(c.describe() for c in lineage.pin_changes)
    if wrong:
        said = ", ".join(
            f"{name} {' and '.join(found)} (pinned {exact[name]})" for name, found in wrong.items()
        )
        return [
            Finding(
                decision=Decision.ERROR,
                reason=(
                    f"head {sha[:12]} changes the dependency pins ({pins}) but its results ran with {said}: measure "
                    f"it again with its pins (fusegate gate --base {base_sha[:12]} --head {sha[:12]} --measure "
                    "runs it in an environment of them)"
                ),
            )
        ]
    shown = ", ".join(f"{name} {found[0]}" for name, found in ran.items() if found)
    return [
        Finding(
            decision=Decision.PASS,
            reason=(
                f"head changes the dependency pins ({pins}): it ran with them"
                + (f" (its results' software: {shown})" if shown else "")
                + ", the base with its own; the rows compare the head under its pins with the base"
            ),
        )
    ]


def _files(paths: tuple[str, ...]) -> str:
    shown = ", ".join(paths[:5])
    return shown + (f" and {len(paths) - 5} more" if len(paths) > 5 else "")


def findings(lineage: Lineage, runs: list[dict], *, side: str, sha: str, base_sha: str) -> list[Finding]:
    """What the runs of one commit on one machine and placement say about how it was measured (``side``: head or
    base; ``runs``: their recorded provenance, {} where none was recorded)."""
    out: list[Finding] = []
    problems = sorted({p for r in runs for p in r.get("problems", [])})
    for problem in problems:
        out.append(Finding(decision=Decision.ERROR, reason=f"{side} {sha[:12]}: {problem}"))
    expected = lineage.base.get("meter")  # both sides are measured with the base's meter
    meters = {r.get("meter") for r in runs}
    if side == "base":
        if any(m not in (None, expected) for m in meters):
            out.append(
                Finding(
                    decision=Decision.ERROR,
                    reason=(
                        f"base {sha[:12]} was measured with another meter than its own: measure it again "
                        f"(fusegate gate --base {sha[:12]} --measure)"
                    ),
                )
            )
        return out
    if None in meters and lineage.meter_changes:
        out.append(
            Finding(
                decision=Decision.ERROR,
                reason=(
                    f"head {sha[:12]} changes the meter ({_files(lineage.meter_changes)}) and its results do not say which "
                    f"meter measured them: measure it with the base's (fusegate gate --base {base_sha[:12]} --head "
                    f"{sha[:12]} --measure)"
                ),
            )
        )
    elif any(m not in (None, expected) for m in meters):
        edited = f" (it edits {_files(lineage.meter_changes)})" if lineage.meter_changes else ""
        out.append(
            Finding(
                decision=Decision.ERROR,
                reason=(
                    f"head {sha[:12]} was measured with another meter than the base's{edited}: a change is measured with "
                    f"its base's meter; measure again (fusegate gate --base {base_sha[:12]} --head {sha[:12]} --measure)"
                ),
            )
        )
    elif lineage.meter_changes:
        out.append(
            Finding(
                decision=Decision.PASS,
                reason=(
                    f"head changes the meter ({_files(lineage.meter_changes)}): measured with the base's meter, which is what "
                    "this verdict judges; once merged, its own meter measures the next changes"
                ),
            )
        )
    return out
