"""A row being judged: what is stored (``gate.domain.evaluations.ComparisonRecord``) and the estimates that
decide it."""

from __future__ import annotations

from dataclasses import dataclass, fields

from gate import stats
from gate.domain.evaluations import ComparisonRecord
from gate.domain.vocabulary import Decision, Kind, Signal


@dataclass(kw_only=True)
class Row:
    machine: str
    kind: Kind
    task: str = ""
    impl: str = ""
    baseline: str = ""
    margin: float = 0.0
    decision: Decision | None = None  # None until the family's decisions are made
    num_envs: int | None = None
    threads: int | None = None
    detail: str = ""
    ratio: float | None = None
    low: float | None = None
    high: float | None = None
    p_value: float | None = None
    q_value: float | None = None
    samples: int = 0
    groups: int = 0
    reason: str = ""
    signal: Signal = Signal.NONE
    cost_ratio: float | None = None
    # working state, not stored
    estimate: stats.Estimate | None = None  # the time estimate (None: decided where found, by no measurement)
    fail_margin: float | None = None
    cost: stats.Estimate | None = None  # the exact cost estimate, when measured
    cost_error: str | None = None
    moments: bool = False  # time from two measurements taken at different moments: never fails on its own
    # time faster beyond the fail margin past false-discovery control; None: not paired in time, never faster
    faster: bool | None = None
    q_faster: float | None = None  # the q-value of "faster" over the row's family
    time_decision: Decision | None = None  # the row's time decision alone, before the signals are combined

    def record(self) -> ComparisonRecord:
        return ComparisonRecord(**{f.name: getattr(self, f.name) for f in fields(ComparisonRecord)})


def measured(estimate: stats.Estimate, **where) -> Row:
    """A row decided by measurement: its time estimate, its decision still to be made."""
    return Row(
        fail_margin=estimate.fail_margin,
        ratio=estimate.ratio,
        low=estimate.low,
        high=estimate.high,
        margin=estimate.margin,
        p_value=estimate.p_slower,
        samples=estimate.samples,
        groups=estimate.groups,
        estimate=estimate,
        **where,
    )


def error(reason: str, **where) -> Row:
    """A row with nothing to decide on: missing data, a failed measurement."""
    return Row(decision=Decision.ERROR, reason=reason, **where)


def passed(signal: Signal, reason: str, **where) -> Row:
    """A row passed without a measurement of its own, by what ``signal`` names (the base's sources, a changed
    baseline, a repaired base)."""
    return Row(decision=Decision.PASS, signal=signal, reason=reason, **where)


def machine_error(machine: str, reason: str) -> Row:
    """A row about a whole machine: missing, measured on other hardware, nothing comparable."""
    return error(reason, machine=machine, kind=Kind.MACHINE)


def join(a: str, b: str) -> str:
    return f"{a}; {b}" if a else b
