"""``python -m tools reevaluate --against``: every row a change alters is listed, matched by what names it."""

import copy

from tools import reevaluate


def _row(impl: str, threads: int, decision: str = "pass", signal: str = "time", ratio: float = 1.0) -> dict:
    return {
        "machine": "m",
        "kind": "head_vs_base",
        "task": "g1_walk",
        "impl": impl,
        "baseline": "handwritten",
        "num_envs": 4096,
        "threads": threads,
        "detail": "",
        "decision": decision,
        "signal": signal,
        "ratio": ratio,
        "low": ratio - 0.1,
        "high": ratio + 0.1,
        "cost_ratio": 1.016,
        "q_value": 0.001,
        "reason": "r",
    }


def _pair(*rows: dict, verdict: str = "approve") -> dict:
    return {"base": "b" * 40, "head": "h" * 40, "verdict": verdict, "reasons": [], "rows": list(rows)}


def test_every_changed_row_is_listed_with_its_decision_and_signal():
    before = [
        _pair(
            _row("assembled", 1, "fail", "cost"),
            _row("assembled", 2, "fail", "cost"),
            _row("numpy", 1),
            verdict="reject",
        )
    ]
    after = copy.deepcopy(before)
    after[0]["verdict"] = "approve"
    for r in after[0]["rows"][:2]:
        r.update(decision="pass", signal="time", reason="faster")
    found = reevaluate.differences(before, after)
    name = f"{'b' * 12} -> {'h' * 12}"
    assert found == [
        f"{name}: verdict reject -> approve",
        f"{name}: head_vs_base g1_walk assembled vs handwritten N=4096 thr=1: decision: 'fail' -> 'pass', "
        "signal: 'cost' -> 'time', reason changed",
        f"{name}: head_vs_base g1_walk assembled vs handwritten N=4096 thr=2: decision: 'fail' -> 'pass', "
        "signal: 'cost' -> 'time', reason changed",
    ]
    assert reevaluate.differences(before, before) == []


def test_rows_that_appear_or_disappear_and_pairs_judged_once_are_named():
    before = [_pair(_row("assembled", 1), _row("numpy", 1))]
    after = [_pair(_row("numpy", 1), _row("numpy", 2, "fail"))]
    found = reevaluate.differences(before, after)
    assert any(f.endswith("numpy vs handwritten N=4096 thr=2: new row, fail by time") for f in found)
    assert any(f.endswith("assembled vs handwritten N=4096 thr=1: no longer a row") for f in found)
    other = {**after[0], "head": "x" * 40}
    assert reevaluate.differences(before, [other]) == [
        f"{'b' * 12} -> {'x' * 12}: not in the earlier output",
        f"{'b' * 12} -> {'h' * 12}: not judged now",
    ]
