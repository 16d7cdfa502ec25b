"""How long a machine takes to measure the gate's suites, before it has asv results of its own."""

# Seconds per benchmark class of the quick profile on the 2-vCPU development machine, measured on a base from
# a fresh clone with an empty result cache (``fusegate run --profile-time``), setup_cache included: HotSlice
# in 6 processes per cell, the paired suites in 3; the lockstep suites on a head whose every kernel changed.
# The estimate of a machine that has no asv results yet (``gate.runner.asvrun``, ``gate.meter.plan``).
SUITE_SECONDS = {
    "cost.Cost": 82.0,  # cold: nothing reused
    "cost.CollectorCost": 1.0,
    "collector.CollectorCheck": 7.5,
    "collector.CollectorPaired": 15.0,
    "hot_slice.HotSlice": 65.0,
    "hot_slice.Paired": 25.0,
    "hot_slice.AgainstBase": 120.0,
    "collector.CollectorAgainstBase": 45.0,
}
