"""The sidecar records: what a benchmark process writes beside asv's results, and what the gate's ingest reads.

One JSON line per record in ``.asv/fusegate/<commit>/<kind>.jsonl``, every record carrying ``FORMAT``, its
``kind``, the commit measured, the placement and the machine and software fingerprints. The writer (the meter,
``benchmarks/_common.py``) and the reader (``gate.ingest``) both take their format version, kinds, suites and
limits from here. Standard library only: asv's own environments import it with nothing but the measured
project and NumPy, Numba and MuJoCo.
"""

from __future__ import annotations

FORMAT = 1
MAX_MESSAGE = (
    2000  # characters of a failure's message (asv keeps no exception text: this is the gate's only copy)
)

# What a record holds, by kind.
PLACEMENT = "placement"  # where a benchmark process ran (every process writes one)
PAIRED = "paired"  # in-process pairs of an implementation and the baseline (hot slice)
COLLECTOR_PAIRED = "collector_paired"  # the same for collector steps, with each side's phases
AGAINST_BASE = "against_base"  # a head's kernel against the base's, in lockstep (impl_s: the head's time)
COLLECTOR_AGAINST_BASE = "collector_against_base"  # the same for collector steps
COLLECTOR_CHECK = "collector_check"  # every implementation's collector against the reference
COLLECTOR = "collector"  # a collector run's report (the full profile's phase tracks)
COST = "cost"  # one cost pass: every cell's per-call instructions and simulated cache misses
FAILURE = "failure"  # a benchmark that raised: its cell, its suite and the exception
PROCESS = "process"  # where a benchmark process's time went (``fusegate run --profile-time``)
HOT_SLICE_METRICS = "hot_slice_metrics"  # bandwidth and CPU utilisation of a cell (full profile)

# The suites a failure record can name: the asv module of the benchmark that raised, or its class's suite.
SUITES = ("hot_slice", "cost", "collector", "collector_cost", "against_base", "collector_against_base")
# A message ends with this when it was cut to MAX_MESSAGE.
CUT = " [...]"


def message(text: str, *, tail: str = "") -> str:
    """``text`` cut to fit ``MAX_MESSAGE`` with ``tail`` (e.g. the command that reproduces it) kept whole."""
    room = MAX_MESSAGE - len(tail)
    if len(text) > room:
        text = text[: room - len(CUT)] + CUT
    return text + tail


def failure(
    *, task: str, impl: str, num_envs: int, threads: int, suite: str, text: str, tail: str = ""
) -> dict:
    """A failure record's fields: the cell, the suite that raised and the message (cut to the limit)."""
    if suite not in SUITES:
        raise ValueError(f"unknown suite {suite!r}; known: {', '.join(SUITES)}")
    return {
        "task": task,
        "impl": impl,
        "num_envs": num_envs,
        "threads": threads,
        "suite": suite,
        "message": message(text, tail=tail),
    }
