"""asv's rule and the gate's, side by side on the same stored samples, with slowdowns injected into the head.

For every timing cell measured on both commits, the head's samples are multiplied by each factor (1.0 is the data
as measured: an A/A pair when the two commits have the same tree) and judged twice:

- asv's rule, with asv's own code (``asv.commands.compare._is_result_better``): worse when the samples differ
  (Mann-Whitney U, p < 0.002, or non-overlapping 99% intervals) and the head's median is beyond ``factor``;
- the gate's: hierarchical-bootstrap summaries per process, the head-vs-base margin of the policy, the machine's
  A/A floor for fails, FDR control over the cells, and a pass that needs ``min_rounds`` processes.

The cost cells (policy ``cost_metric``, 1 thread) get the same factor: asv compares a track by its ratio alone
(worse above ``factor``); the gate fails a cost above ``cost_margin`` (or the machine's A/A cost floor).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from asv.commands.compare import _is_result_better
from asv_runner.statistics import compute_stats
from sqlalchemy.orm import Session

from gate import stats
from gate.domain.benchmarks import TIME
from gate.evaluate import NoiseFloors
from gate.policy import Policy
from gate.services.calibration import cost_pairs
from gate.stats import Decision
from gate.store import queries

ASV_FACTOR = 1.1


def _asv_worse(base: list[float], head: list[float], factor: float) -> bool:
    a, stats_a = compute_stats(base, [1] * len(base))
    b, stats_b = compute_stats(head, [1] * len(head))
    return _is_result_better(a, b, (stats_a, base), (stats_b, head), factor)


def compare(
    session: Session,
    *,
    base_sha: str,
    head_sha: str,
    policy: Policy,
    injections: Sequence[float],
    asv_factor: float = ASV_FACTOR,
) -> list[dict]:
    base = queries.raw_samples(session, commit_sha=base_sha, benchmark=TIME)
    head = queries.raw_samples(session, commit_sha=head_sha, benchmark=TIME)
    cells = sorted(k for k in base.keys() & head.keys() if policy.judges_head_vs_base(k[3]))
    if not cells:
        raise ValueError(f"no timing cell measured on both {base_sha[:12]} and {head_sha[:12]}")
    floors = NoiseFloors(session)
    margin = policy.head_vs_base_margin
    summaries = {k: (stats.summarize(base[k]), stats.summarize(head[k], seed=1)) for k in cells}
    pooled = {k: ([x for g in base[k] for x in g], np.concatenate(head[k])) for k in cells}
    costs = cost_pairs(
        session,
        base_sha=base_sha,
        head_sha=head_sha,
        metric=policy.cost_metric,
        impls=policy.head_vs_base or None,
    )
    rows = []
    for factor in injections:
        cost_fails = sum(
            stats.decide_exact(
                stats.exact_estimate(
                    a,
                    b.scaled(factor),
                    margin=policy.cost_margin,
                    fail_margin=floors.cost_fail_margin(m, policy.cost_metric, policy.cost_margin),
                )
            )
            is Decision.FAIL
            for m, a, b in costs
        )
        asv_cost = sum(math.exp(b.center - a.center) * factor > asv_factor for _, a, b in costs)
        estimates, asv_flags = [], 0
        for key in cells:
            machine, threads = key[0], key[5]
            asv_flags += int(_asv_worse(pooled[key][0], list(pooled[key][1] * factor), asv_factor))
            a, b = summaries[key]
            fail_margin, _ = floors.fail_margin(machine, threads, margin)
            estimates.append(
                stats.unpaired_estimate(a, b.scaled(factor), margin=margin, fail_margin=fail_margin)
            )
        decisions = [d for d, _ in stats.decide_all(estimates, min_groups=policy.min_rounds)]
        rows.append(
            {
                "injected": factor,
                "cells": len(cells),
                "asv_worse": asv_flags,
                "gate_fail": decisions.count(Decision.FAIL),
                "gate_pass": decisions.count(Decision.PASS),
                "gate_inconclusive": decisions.count(Decision.INCONCLUSIVE),
                "cost_cells": len(costs),
                "asv_cost_worse": asv_cost,
                "gate_cost_fail": cost_fails,
            }
        )
    return rows
