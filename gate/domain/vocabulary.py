"""The words of a verdict, from the store to the wire: each a ``StrEnum``, so stored and sent values are its
values."""

from __future__ import annotations

from enum import StrEnum


class Status(StrEnum):
    """How a measured cell came out: a result as asv or the sidecar recorded it (ok or failed), and a cell
    summary, which is also insufficient when its samples are too few to summarize."""

    OK = "ok"
    FAILED = (
        "failed"  # the benchmark raised (parity, construction, the collector's check) or asv recorded null
    )
    INSUFFICIENT = (
        "insufficient"  # a summary only: measured, but too few samples to summarize (its message: why)
    )


class Verdict(StrEnum):
    """The answer for a (base, head) pair."""

    APPROVE = "approve"
    REJECT = "reject"
    INCONCLUSIVE = "inconclusive"
    ERROR = "error"


class Decision(StrEnum):
    """One row's decision (``gate.stats.decide``)."""

    PASS = "pass"
    FAIL = "fail"
    INCONCLUSIVE = "inconclusive"
    ERROR = "error"  # nothing to decide on: no samples, a failed benchmark, a missing machine
    ACCEPTED = (
        "accepted"  # a fail a maintainer accepted on record for this head (gate.acceptance): not a fail
    )


class Signal(StrEnum):
    """What decided a row (``gate.stats.signals``)."""

    COST = "cost"  # the exact per-call cost under callgrind
    TIME = "time"  # the wall-time interval
    NONE = "none"  # decided where found, without a measurement: correctness, missing data
    BASE = "base"  # a headline row as on the base, not made worse by the head (gate.evaluate.inherited)
    SOURCES = (
        "sources"  # a head-vs-base row of a kernel whose sources are the base's (gate.evaluate.head_vs_base)
    )
    # a paired-head-vs-base row whose baseline's sources changed: the implementation's own rows judge it
    BASELINE = "baseline"
    # a head-vs-base row whose benchmark failed on the base and runs on the head: nothing to time it against
    REPAIRED = "repaired"
    # a cost fail beside a time that is not slower, while the same kernel and scale is faster beyond doubt at
    # another thread count (gate.evaluate.tradeoff): passed or failed by the policy's ``tradeoffs``
    TRADEOFF = "tradeoff"


class Kind(StrEnum):
    """What a row compares (docs/gate.md#reading-a-verdict); one module of ``gate.evaluate`` each."""

    CORRECTNESS = (
        "correctness"  # a benchmark that raised on the head: parity, construction, the collector's check
    )
    IMPL_VS_BASELINE = "impl_vs_baseline"  # an implementation against the baseline, paired in one process
    BEST_THREADS = "best_threads"  # each at its own fastest thread count
    HEAD_VS_BASE = "head_vs_base"  # head against base, in lockstep (or raw times of two moments)
    PAIRED_HEAD_VS_BASE = "paired_head_vs_base"  # the paired ratio to the baseline, head over base
    COLLECTOR_VS_BASELINE = "collector_vs_baseline"  # the collector step against the baseline's
    COLLECTOR_HEAD_VS_BASE = "collector_head_vs_base"  # the collector step, head against base
    METER = "meter"  # how the head was measured (provenance)
    MACHINE = "machine"  # a machine: missing, changed hardware, nothing comparable


EXIT_CODES = {Verdict.APPROVE: 0, Verdict.REJECT: 1, Verdict.INCONCLUSIVE: 2, Verdict.ERROR: 3}
