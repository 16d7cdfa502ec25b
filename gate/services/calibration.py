"""A/A calibration: noise floors from two commits with the same tree, stored for later evaluations."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from sqlalchemy.orm import Session

from gate import stats
from gate.domain.benchmarks import COST, TIME
from gate.domain.vocabulary import Status
from gate.evaluate import cost_design, summary_of
from gate.stats.calibrate import MIN_CELLS
from gate.store import queries


def cost_pairs(
    session: Session, *, base_sha: str, head_sha: str, metric: str, impls: Iterable[str] | None = None
) -> list[tuple[str, stats.Summary, stats.Summary]]:
    """(machine, base, head) summaries of every cost cell of ``metric`` measured on both commits, one placement."""
    if metric == "none":
        return []
    name = COST[metric]

    def cells(sha):
        return {
            (m, p, c.task, c.impl, c.num_envs): c
            for m, p, _, c in queries.summaries(session, commit_sha=sha)
            if c.benchmark == name and c.status == Status.OK and (impls is None or c.impl in impls)
        }

    base, head = cells(base_sha), cells(head_sha)
    return [(key[0], summary_of(base[key]), summary_of(c)) for key, c in sorted(head.items()) if key in base]


def calibrate(
    session: Session, *, base_sha: str, head_sha: str, cost_metric: str = "instructions"
) -> dict[tuple[str, int | str], stats.NoiseFloor]:
    """A/A noise floors per (machine, threads) for time, and per (machine, "cost") for the cost metric (its
    largest A/A difference), stored for later evaluations."""
    base = {
        (m, p, c.task, c.impl, c.num_envs, c.threads): c
        for m, p, _, c in queries.summaries(session, commit_sha=base_sha)
        if c.benchmark == TIME and c.status == Status.OK
    }
    by: dict[tuple[str, int], list[stats.Estimate]] = defaultdict(list)
    for m, p, _, c in queries.summaries(session, commit_sha=head_sha):
        a = base.get((m, p, c.task, c.impl, c.num_envs, c.threads))
        if c.benchmark == TIME and c.status == Status.OK and a is not None:
            by[(m, c.threads)].append(stats.unpaired_estimate(summary_of(a), summary_of(c), margin=0.0))
    cost: dict[str, list[stats.Estimate]] = defaultdict(list)
    for m, a, c in cost_pairs(session, base_sha=base_sha, head_sha=head_sha, metric=cost_metric):
        cost[m].append(stats.exact_estimate(a, c, margin=0.0))
    if not by:
        raise ValueError(
            f"no cell measured on both {base_sha[:12]} and {head_sha[:12]} on one machine and placement"
        )
    floors = {}
    for (machine, threads), estimates in sorted(by.items()):
        floor = stats.noise_floor(estimates)
        queries.save_calibration(
            session, machine=machine, design="unpaired", threads=threads, floor=floor, commit_sha=head_sha
        )
        floors[(machine, threads)] = floor
    for machine, estimates in sorted(cost.items()):
        if len(estimates) >= MIN_CELLS:
            floor = stats.noise_floor(estimates)
            design = cost_design(cost_metric)
            queries.save_calibration(
                session, machine=machine, design=design, threads=1, floor=floor, commit_sha=head_sha
            )
            floors[(machine, "cost")] = floor
    return floors
