"""``python -m tools changepoints-bench``: the change-point methods (``gate.stats.changepoints``) scored on injected
steps in this machine's A/A noise, and the chosen solver at other penalties."""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable, Sequence

import numpy as np

from gate.domain.benchmarks import PAIRED, TIME
from gate.domain.vocabulary import Status
from gate.stats.changepoints import CHOSEN, METHODS, PENALTY, potts, sigma

TOLERANCE = 1  # a step found within this many commits of the true one counts as found


def with_penalties(penalties: Sequence[float]) -> dict[str, Callable[[np.ndarray, float], list[int]]]:
    """METHODS plus the chosen solver at other penalties (to see where ``PENALTY`` sits)."""
    extra = {
        f"{CHOSEN}, penalty {k:g}": functools.partial(potts, penalty=k) for k in penalties if k != PENALTY
    }
    return {**METHODS, **extra}


def compare_methods(
    noise: np.ndarray,
    *,
    series: int = 300,
    length: int = 60,
    sizes=(0.03, 0.05, 0.10, 0.20),
    seed: int = 0,
    methods: dict | None = None,
) -> list[dict]:
    """Score every method on series with 0-2 injected steps of each size (a random sign), the noise drawn from
    ``noise`` (per-point log errors). Returns one row per (method, size) with recall, precision and the false
    steps per 100 commits on series with no step."""
    rng = np.random.default_rng(seed)
    rows = []
    for size in sizes:
        cases = []
        for i in range(series):
            k = i % 3  # 0, 1 or 2 steps
            positions = sorted(rng.choice(np.arange(5, length - 5), size=k, replace=False)) if k else []
            level = np.zeros(length)
            for p in positions:
                level[p:] += math.log1p(size) * rng.choice((-1.0, 1.0))
            cases.append((level + rng.choice(noise, size=length), positions))
        free = sum(1 for _, p in cases if not p)
        for name, method in (methods or METHODS).items():
            found = true = hits = matched = false_free = 0
            started = time.perf_counter()
            for logs, positions in cases:
                breaks = method(logs, sigma(logs))
                found += len(breaks)
                true += len(positions)
                hits += sum(any(abs(b - p) <= TOLERANCE for b in breaks) for p in positions)
                matched += sum(any(abs(b - p) <= TOLERANCE for p in positions) for b in breaks)
                false_free += 0 if positions else len(breaks)
            rows.append(
                {
                    "method": name,
                    "step": size,
                    "recall": hits / true,
                    "precision": matched / found if found else float("nan"),
                    "false_per_100": 100 * false_free / (free * length),
                    "ms_per_series": 1e3 * (time.perf_counter() - started) / len(cases),
                }
            )
    return rows


def aa_noise(results, base: str, head: str) -> np.ndarray:
    """Per-point log errors of this machine: the differences of matching cells' estimates between two commits
    with the same tree (an A/A pair), over sqrt(2). ``results``: an asv results directory."""
    from gate import stats
    from gate.ingest import asv_dir, bundle

    centers: dict[str, dict[tuple, float]] = {base: {}, head: {}}
    for b in asv_dir.read(results):
        for run in bundle.runs(b):
            if run.commit not in centers:
                continue
            for r in run.results:
                if r.status == Status.OK and r.benchmark in (TIME, PAIRED) and r.samples:
                    key = (
                        run.machine,
                        run.placement.get("label", ""),
                        r.benchmark,
                        r.task,
                        r.impl,
                        r.num_envs,
                        r.threads,
                    )
                    centers[run.commit][key] = stats.summarize(r.samples).center
    common = sorted(set(centers[base]) & set(centers[head]))
    if len(common) < 5:
        raise ValueError(
            f"{results}: {len(common)} cells measured on both {base[:12]} and {head[:12]}; an A/A pair needs more"
        )
    return np.array([centers[head][k] - centers[base][k] for k in common]) / math.sqrt(2)
