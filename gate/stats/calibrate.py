"""A/A calibration: what a machine's noise looks like when nothing changed.

From comparisons of a build against itself (two runs of one commit on one machine), per (machine, design,
threads):

- the **noise floor** is the largest A/A deviation one should expect: rustc-perf's rule on the absolute
  log-ratios, Q3 + 3 * IQR, floored at their maximum so no observed A/A deviation would be flagged;
- the **minimum detectable effect** is the smallest slowdown a cell can still call a fail: the noise floor plus
  the typical half-width of the confidence interval (a fail needs the whole interval beyond the margin).

The gate never uses a margin below the noise floor for comparisons across processes (commits, thread counts).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np

from gate.stats.estimate import Estimate


@dataclass(frozen=True, kw_only=True)
class NoiseFloor:
    noise_floor: float  # as a fraction: 0.05 = A/A runs differ by up to 5%
    mde: float  # minimum detectable slowdown, as a fraction
    cells: int  # A/A comparisons it was learned from

    def to_dict(self) -> dict:
        return asdict(self)


MIN_CELLS = 3


def noise_floor(aa: Sequence[Estimate]) -> NoiseFloor:
    """Noise floor and MDE from A/A estimates; raises ValueError with fewer than MIN_CELLS."""
    if len(aa) < MIN_CELLS:
        raise ValueError(f"A/A calibration needs at least {MIN_CELLS} comparisons, got {len(aa)}")
    deviations = np.abs(np.log([e.ratio for e in aa]))
    q1, q3 = np.quantile(deviations, [0.25, 0.75])
    floor = max(float(q3 + 3 * (q3 - q1)), float(deviations.max()))
    half_widths = [(math.log(e.high) - math.log(e.low)) / 2 for e in aa]
    return NoiseFloor(
        noise_floor=math.expm1(floor),
        mde=math.expm1(floor + float(np.median(half_widths))),
        cells=len(aa),
    )
