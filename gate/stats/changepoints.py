"""Change points in a cell's history along main, and the measurement that chose how to find them.

``detect`` finds steps in the per-commit log estimates by minimising the sum of absolute deviations from each
segment's median (so one wild point is not a step) plus ``PENALTY`` x sigma x log(n) per step, where sigma is the
series' own noise estimated from its first differences (robust to the steps themselves). That is the objective
of ruptures' PELT with the l1 cost; asv's exact Potts solver finds the same optimum faster, so it is the one used.

``tools.changepoints_bench.compare_methods`` is what chose: it injects steps of known size and position into series whose noise is
resampled from an A/A pair of this machine (``python -m tools changepoints-bench``) and scores each candidate (ruptures
PELT with the l1 and l2 costs, ruptures binary segmentation, asv's Potts solvers and asv's own ``step_detect``) by
the injected steps it finds within one commit, the steps it invents, and its time.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from asv.step_detect import detect_steps, solve_potts, solve_potts_approx

PENALTY = 2.0  # chosen with compare_methods on this machine's A/A noise (python -m tools changepoints-bench)


@dataclass(frozen=True, kw_only=True)
class Step:
    index: int  # first point after the step
    before: float  # level (median of the segment) before and after, in the series' units
    after: float

    @property
    def change(self) -> float:
        return self.after / self.before - 1


def sigma(logs: np.ndarray) -> float:
    """Point noise from first differences: MAD / 0.6745 / sqrt(2), so that a few steps do not inflate it."""
    diffs = np.diff(logs)
    if diffs.size == 0:
        return 0.0
    return float(np.median(np.abs(diffs - np.median(diffs))) / 0.6745 / math.sqrt(2))


def _pelt_l1(logs: np.ndarray, sigma: float) -> list[int]:
    pen = PENALTY * max(sigma, 1e-9) * math.log(len(logs))
    import ruptures  # only the comparison uses it; not imported at start-up

    return ruptures.Pelt(model="l1", min_size=2, jump=1).fit(logs).predict(pen=pen)[:-1]


L2_PENALTY = 8.0  # the best of 3, 8 and 20 for the least-squares cost in the same measurement


def _pelt_l2(logs: np.ndarray, sigma: float) -> list[int]:
    pen = L2_PENALTY * max(sigma, 1e-9) ** 2 * math.log(len(logs))
    import ruptures  # only the comparison uses it; not imported at start-up

    return ruptures.Pelt(model="l2", min_size=2, jump=1).fit(logs).predict(pen=pen)[:-1]


def _binseg_l2(logs: np.ndarray, sigma: float) -> list[int]:
    pen = L2_PENALTY * max(sigma, 1e-9) ** 2 * math.log(len(logs))
    import ruptures  # only the comparison uses it; not imported at start-up

    return ruptures.Binseg(model="l2", min_size=2, jump=1).fit(logs).predict(pen=pen)[:-1]


def _asv(logs: np.ndarray, sigma: float) -> list[int]:
    return [left for left, *_ in detect_steps(list(np.exp(logs)))][1:]


def potts(logs: np.ndarray, sigma: float, *, exact: bool = True, penalty: float = PENALTY) -> list[int]:
    """asv's Potts solver (dynamic programming over compiled range medians) on the objective PELT (l1)
    minimises: the sum of absolute deviations from each segment's median + the same penalty per step."""
    gamma = penalty * max(sigma, 1e-9) * math.log(len(logs))
    y, w = [float(x) for x in logs], [1.0] * len(logs)
    right, _, _ = (solve_potts if exact else solve_potts_approx)(y, w, gamma=gamma, min_size=2)
    return list(right[:-1])


def _potts_approx(logs: np.ndarray, sigma: float) -> list[int]:
    return potts(logs, sigma, exact=False)


METHODS: dict[str, Callable[[np.ndarray, float], list[int]]] = {
    "asv Potts exact (l1)": potts,
    "ruptures PELT (l1)": _pelt_l1,
    "asv Potts approx (l1)": _potts_approx,
    "ruptures PELT (l2)": _pelt_l2,
    "ruptures Binseg (l2)": _binseg_l2,
    "asv step_detect": _asv,
}
CHOSEN = "asv Potts exact (l1)"


def detect(values: Sequence[float], *, min_sigma: float = 0.0) -> list[Step]:
    """Steps in a positive series (times or ratios), oldest first. ``min_sigma`` floors the noise estimate (log
    units), e.g. with the points' own standard errors, so a series that happens to be smooth does not make every
    wiggle a step."""
    v = np.asarray(values, dtype=float)
    if v.size < 4 or not np.all(np.isfinite(v)) or np.any(v <= 0):
        return []
    logs = np.log(v)
    breaks = METHODS[CHOSEN](logs, max(sigma(logs), min_sigma))
    edges = [0, *breaks, len(v)]
    steps = []
    for i, index in enumerate(breaks):
        before = float(np.exp(np.median(logs[edges[i] : index])))  # the l1 cost's segment levels
        after = float(np.exp(np.median(logs[index : edges[i + 2]])))
        steps.append(Step(index=index, before=before, after=after))
    return steps
