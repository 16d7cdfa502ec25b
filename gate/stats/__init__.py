"""Pure statistics: samples in, typed estimates and decisions out (no I/O, no store)."""

from gate.stats.calibrate import NoiseFloor, noise_floor
from gate.stats.decide import Decision, decide, decide_all, decide_exact, faster, faster_all, q_values
from gate.stats.estimate import (
    CONFIDENCE,
    Estimate,
    InsufficientData,
    Summary,
    exact,
    exact_estimate,
    paired,
    paired_estimate,
    summarize,
    unpaired,
    unpaired_estimate,
)

__all__ = [
    "CONFIDENCE",
    "Decision",
    "Estimate",
    "InsufficientData",
    "NoiseFloor",
    "Summary",
    "decide",
    "decide_all",
    "decide_exact",
    "exact",
    "exact_estimate",
    "faster",
    "faster_all",
    "noise_floor",
    "paired",
    "paired_estimate",
    "q_values",
    "summarize",
    "unpaired",
    "unpaired_estimate",
]
