"""Headline rows the head inherits from its base (``gate.evaluate.inherited``): a pull request is judged on its
change, not blocked by an implementation that was already slower than the baseline on the base."""

from __future__ import annotations

import random

import pytest

from gate.domain.vocabulary import Decision, Kind, Signal
from gate.evaluate import inherited
from gate.evaluate.row import Row
from tests.gate import gitrepo
from tests.gate.builders import POLICY, by_decision, evaluate_pair, ingest, measure_results

SLOW = {("g1_walk", 32768, 1), ("g1_walk", 32768, 2)}


def _effect(factor):
    return lambda c: (
        factor if (c["task"], c["num_envs"], c["threads"]) in SLOW and c["impl"] == "assembled" else 1.0
    )


def _pair(tmp_path, store_url, base_effect, head_effect, policy=POLICY):
    path, base, head = gitrepo.base_and_head(tmp_path / "repo", policy=policy)
    ingest(
        store_url,
        measure_results(tmp_path / "a", base, paired_effect=_effect(base_effect), seed=random.randrange(99)),
    )
    ingest(
        store_url,
        measure_results(tmp_path / "b", head, paired_effect=_effect(head_effect), seed=random.randrange(99)),
    )
    return evaluate_pair(store_url, path, base, head)


def test_a_headline_fail_the_base_already_had_does_not_block_the_head(store_url, tmp_path):
    factor = random.uniform(1.2, 1.3)  # the base's assembled kernel is slower than the hand-written one
    e = _pair(tmp_path, store_url, factor, factor)
    assert e.verdict == "approve", [c.reason for c in e.comparisons if c.decision != "pass"]
    passed = [c for c in e.comparisons if c.signal == "base"]
    assert {(c.task, c.num_envs, c.threads) for c in passed if c.kind == "impl_vs_baseline"} == SLOW
    assert all(c.ratio > 1.1 and "as on the base, fail at" in c.reason for c in passed)
    assert any("inherited_pass" in r for r in e.reasons)


def test_a_head_that_makes_it_worse_is_judged_on_its_own(store_url, tmp_path):
    e = _pair(tmp_path, store_url, 1.25, random.uniform(1.6, 2.0))
    assert e.verdict == "reject"
    failed = {(c.task, c.num_envs, c.threads) for c in by_decision(e, "fail") if c.kind == "impl_vs_baseline"}
    assert failed == SLOW and not [c for c in e.comparisons if c.signal == "base"]


def test_a_policy_can_block_every_head_until_the_headline_holds(store_url, tmp_path):
    e = _pair(tmp_path, store_url, 1.25, 1.25, policy=POLICY + "inherited_pass = false\n")
    assert e.verdict == "reject" and not [c for c in e.comparisons if c.signal == "base"]


def _row(decision, ratio, low, high, kind=Kind.IMPL_VS_BASELINE, **kw):
    where = {
        "machine": "m",
        "task": "t",
        "impl": "assembled",
        "baseline": "handwritten",
        "num_envs": 8,
        "threads": 2,
        "groups": 3,
    }
    return Row(kind=kind, decision=decision, ratio=ratio, low=low, high=high, **(where | kw))


@pytest.mark.parametrize(
    ("base", "head", "passes"),
    [
        ((Decision.INCONCLUSIVE, 1.04, 1.02, 1.06), (Decision.INCONCLUSIVE, 1.05, 1.01, 1.09), True),
        ((Decision.FAIL, 1.25, 1.2, 1.3), (Decision.FAIL, 1.32, 1.3, 1.35), True),  # touching it: not worse
        ((Decision.FAIL, 1.25, 1.2, 1.3), (Decision.FAIL, 1.33, 1.31, 1.37), False),  # wholly above: worse
        ((Decision.PASS, 1.0, 0.98, 1.02), (Decision.FAIL, 1.25, 1.2, 1.3), False),  # new on the head
        ((Decision.FAIL, 1.25, 1.2, 1.3), (Decision.PASS, 1.0, 0.98, 1.02), False),  # nothing to inherit
        ((Decision.ERROR, None, None, None), (Decision.INCONCLUSIVE, 1.04, 1.0, 1.08), False),
    ],
)
def test_the_rule_row_by_row(base, head, passes):
    row = _row(*head)
    before = row.decision
    assert inherited.apply([row], [_row(*base)]) == int(passes)
    assert (row.decision, row.signal) == ((Decision.PASS, Signal.BASE) if passes else (before, Signal.NONE))


def test_an_estimate_of_too_few_processes_inherits_nothing():
    one = _row(Decision.INCONCLUSIVE, 1.04, 1.0, 1.08, groups=1)
    assert inherited.apply([one], [_row(Decision.INCONCLUSIVE, 1.04, 1.0, 1.08)]) == 0
    assert inherited.apply([_row(Decision.INCONCLUSIVE, 1.04, 1.0, 1.08)], [one]) == 0


def test_only_headline_rows_of_the_same_cell_are_inherited():
    change = _row(Decision.FAIL, 1.25, 1.2, 1.3, kind=Kind.HEAD_VS_BASE)  # a change: never inherited
    other_scale = _row(Decision.FAIL, 1.25, 1.2, 1.3, num_envs=16)
    assert inherited.apply([change, other_scale], [change, _row(Decision.FAIL, 1.25, 1.2, 1.3)]) == 0
    # at each one's best count, the scale's row whatever the counts
    best = _row(Decision.FAIL, 1.25, 1.2, 1.3, kind=Kind.BEST_THREADS)
    assert (
        inherited.apply([best], [_row(Decision.FAIL, 1.25, 1.2, 1.3, kind=Kind.BEST_THREADS, threads=1)]) == 1
    )
