"""Every stored (base, head) pair judged again by this code: what a change to the evaluation does to verdicts.

Time rows drift between runs of a machine, so a refactoring of the evaluation is checked on stored results, not
fresh runs: judge every pair before and after the change and compare (``fusegate dev reevaluate --against``).
"""

from __future__ import annotations

from pathlib import Path

from sqlalchemy.orm import Session

from gate.evaluate import judge
from gate.store import queries

# What a row's identity and decision are made of: a refactoring must keep every one of them.
FIELDS = (
    "machine",
    "kind",
    "task",
    "impl",
    "baseline",
    "num_envs",
    "threads",
    "detail",
    "decision",
    "signal",
    "ratio",
    "low",
    "high",
    "cost_ratio",
    "q_value",
    "reason",
)


def judged(session: Session, *, repo: Path) -> list[dict]:
    out = []
    for base_sha, head_sha in queries.evaluation_pairs(session, official=False):
        o = judge(session, repo=repo, base_sha=base_sha, head_sha=head_sha)
        rows = [{f: getattr(c, f) for f in FIELDS} for c in o.comparisons]
        out.append(
            {
                "base": base_sha,
                "head": head_sha,
                "verdict": str(o.verdict),
                "reasons": o.reasons,
                "rows": [
                    {k: str(v) if k in ("kind", "decision", "signal") else v for k, v in r.items()}
                    for r in rows
                ],
            }
        )
    return out


def differences(before: list[dict], after: list[dict]) -> list[str]:
    """What changed between two ``judged`` outputs, one line per pair and first differing row."""
    old = {(p["base"], p["head"]): p for p in before}
    out = []
    for p in after:
        key = (p["base"], p["head"])
        q = old.pop(key, None)
        name = f"{key[0][:12]} -> {key[1][:12]}"
        if q is None:
            out.append(f"{name}: not in the earlier output")
        elif q != p:
            if q["verdict"] != p["verdict"]:
                out.append(f"{name}: verdict {q['verdict']} -> {p['verdict']}")
            elif len(q["rows"]) != len(p["rows"]):
                out.append(f"{name}: {len(q['rows'])} rows -> {len(p['rows'])}")
            else:
                diff = next(((a, b) for a, b in zip(q["rows"], p["rows"], strict=True) if a != b), None)
                out.append(f"{name}: row {diff[0]} -> {diff[1]}" if diff else f"{name}: reasons differ")
    out += [f"{b[:12]} -> {h[:12]}: not judged now" for b, h in old]
    return out
