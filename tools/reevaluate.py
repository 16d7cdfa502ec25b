"""Every stored (base, head) pair judged again by this code: what a change to the evaluation does to verdicts.

Time rows drift between runs of a machine, so a refactoring of the evaluation is checked on stored results, not
fresh runs: judge every pair before and after the change and compare (``python -m tools reevaluate --against``).
"""

from __future__ import annotations

from pathlib import Path

from sqlalchemy.orm import Session

from gate.evaluate import judge
from gate.store import acceptances, queries

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
        on_record = acceptances.for_head(session, head_sha=head_sha)  # as the served verdict is judged
        o = judge(session, repo=repo, base_sha=base_sha, head_sha=head_sha, acceptances=on_record)
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


# What names a row: a pair's rows are matched on these, the rest of FIELDS is what a change may alter.
IDENTITY = ("machine", "kind", "task", "impl", "baseline", "num_envs", "threads", "detail")


def _name(row: dict) -> str:
    return (
        f"{row['kind']} {row['task']} {row['impl']} vs {row['baseline']} N={row['num_envs']} "
        f"thr={row['threads']}" + (f" {row['detail']}" if row.get("detail") else "")
    )


def _row_changes(old: dict, new: dict) -> str:
    changed = [f for f in FIELDS if f not in IDENTITY and old.get(f) != new.get(f)]
    return ", ".join(
        f"{f}: {old.get(f)!r} -> {new.get(f)!r}" if f in ("decision", "signal") else f"{f} changed"
        for f in changed
    )


def differences(before: list[dict], after: list[dict]) -> list[str]:
    """What changed between two ``judged`` outputs: per pair its verdict, then every row that differs (matched
    by IDENTITY; its decision and signal old -> new, which other fields changed), appeared or disappeared."""
    old = {(p["base"], p["head"]): p for p in before}
    out = []
    for p in after:
        key = (p["base"], p["head"])
        q = old.pop(key, None)
        name = f"{key[0][:12]} -> {key[1][:12]}"
        if q is None:
            out.append(f"{name}: not in the earlier output")
            continue
        if q == p:
            continue
        if q["verdict"] != p["verdict"]:
            out.append(f"{name}: verdict {q['verdict']} -> {p['verdict']}")
        rows_q = {tuple(r.get(f) for f in IDENTITY): r for r in q["rows"]}
        for r in p["rows"]:
            was = rows_q.pop(tuple(r.get(f) for f in IDENTITY), None)
            if was is None:
                out.append(f"{name}: {_name(r)}: new row, {r['decision']} by {r['signal']}")
            elif was != r:
                out.append(f"{name}: {_name(r)}: {_row_changes(was, r)}")
        out += [f"{name}: {_name(r)}: no longer a row" for r in rows_q.values()]
        if q["reasons"] != p["reasons"] and q["verdict"] == p["verdict"] and q["rows"] == p["rows"]:
            out.append(f"{name}: reasons differ")
    out += [f"{b[:12]} -> {h[:12]}: not judged now" for b, h in old]
    return out
