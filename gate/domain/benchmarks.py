"""The asv benchmarks the gate reads: their names, parameters and units, and where their samples come from."""

from __future__ import annotations

from gate import sidecar

# The cost signal's metrics (callgrind): instructions, simulated cache misses and their cycle estimate.
COST_METRICS = ("instructions", "l1_misses", "ll_misses", "estimated_cycles")
# The asv benchmarks the gate reads, with their parameter names (from benchmarks.json, checked against these).
GRID = ("task", "impl", "num_envs", "threads")
# The cost signal (benchmarks/cost.py): one exact value per cell and metric, measured at 1 thread.
COST = {metric: f"cost.Cost.track_{metric}" for metric in COST_METRICS}
# The end-to-end collector (benchmarks/collector.py): its check against the reference's rollout, its paired step
# ratio to the baseline, and the cost of its step without physics (benchmarks/cost.py).
COLLECTOR_CHECK = "collector.CollectorCheck.track_reward_max_diff"
COLLECTOR_PAIRED = "collector.CollectorPaired.track_ratio"
COLLECTOR_COST = {metric: f"cost.CollectorCost.track_{metric}" for metric in COST_METRICS}
# Derived from the ``collector_paired`` sidecar records, one sample list per process: each side's step time
# (the baseline's from every process it was paired in), and its physics, kernel and the rest per env-step.
COLLECTOR_STEP = "collector.CollectorPaired.step"
# A head against its base in lockstep (two worker processes, samples alternated): head/base ratios, one sample list
# per worker pair. The head_vs_base rows' time, where they exist.
AGAINST_BASE = "hot_slice.AgainstBase.track_ratio"
COLLECTOR_AGAINST_BASE = "collector.CollectorAgainstBase.track_ratio"
COLLECTOR_PHASES = {phase: f"collector.CollectorPaired.{phase}_us" for phase in ("physics", "kernel", "rest")}
COST_BENCHMARKS = frozenset(COST.values()) | frozenset(COLLECTOR_COST.values())
COST_UNITS = {
    "instructions": "instructions",
    "l1_misses": "misses",
    "ll_misses": "misses",
    "estimated_cycles": "cycles",
}
# Benchmarks the gate reads only as passed or failed: their value is kept, their samples are not summarized
# (a reward difference of 0 has no logarithm).
STATUS_ONLY = frozenset({COLLECTOR_CHECK})
BENCHMARKS = {
    "hot_slice.HotSlice.time_update_state": GRID,
    "hot_slice.Paired.track_ratio": GRID,
    "hot_slice.HotSliceMetrics.track_time_vs_copy": GRID,
    "hot_slice.HotSliceMetrics.track_cpu_util": GRID,
    "hot_slice.JIT.track_compile_s": ("task", "impl"),
    "hot_slice.JIT.track_cache_load_s": ("task", "impl"),
    **{name: GRID for name in COST.values()},
    COLLECTOR_CHECK: GRID,
    COLLECTOR_PAIRED: GRID,
    **{name: GRID for name in COLLECTOR_COST.values()},
    AGAINST_BASE: GRID,
    COLLECTOR_AGAINST_BASE: GRID,
}

PAIRED = "hot_slice.Paired.track_ratio"
TIME = "hot_slice.HotSlice.time_update_state"
# asv benchmarks whose samples come from sidecar records of this kind (one per benchmark process), not asv.
SIDECAR_PAIRED = {
    PAIRED: sidecar.PAIRED,
    COLLECTOR_PAIRED: sidecar.COLLECTOR_PAIRED,
    AGAINST_BASE: sidecar.AGAINST_BASE,
    COLLECTOR_AGAINST_BASE: sidecar.COLLECTOR_AGAINST_BASE,
}
# The failure records' suite per asv class whose suite is not its module.
SUITE_OF_CLASS = {
    "cost.CollectorCost": "collector_cost",
    "hot_slice.AgainstBase": sidecar.AGAINST_BASE,
    "collector.CollectorAgainstBase": sidecar.COLLECTOR_AGAINST_BASE,
}


def suite_of(benchmark: str) -> str:
    """The failure records' suite of an asv benchmark: its module, or its class's entry in SUITE_OF_CLASS."""
    module, cls = benchmark.split(".")[:2]
    return SUITE_OF_CLASS.get(f"{module}.{cls}", module)
