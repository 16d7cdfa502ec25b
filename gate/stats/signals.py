"""Which signal decides a row: its time interval, its exact cost, or both.

A row with a time estimate may also carry the exact cost ratio of the same kernel and scale at 1 thread
(callgrind; docs/gate.md). The two signals see different things: cost sees every added instruction at any
thread count, exactly, and nothing that is not an instruction (a serial loop, false sharing, oversubscription,
a cache-hostile order); time sees everything, with noise. So:

- **fail** when either signal fails: a cost fail is exact; a time fail has cleared the fail margin (the
  machine's A/A floor when larger) and false-discovery control over the evaluation's cells;
- **pass** when time passes, or when cost passes and **time does not question it**: time's point estimate is
  at most 1 + the fail margin. A row whose time says slower (the estimate above that, a fortiori an interval
  wholly above it) is never passed by cost: it is inconclusive, gets rounds, and ends failed by time or
  inconclusive at the budget;
- **inconclusive** otherwise (time undecided, and cost undecided or absent);
- **error** when the cost pass that backs the row failed to measure and time did not fail: nothing decided it.

The rule is the same at every thread count. What it bounds: approving a change whose true time ratio is r >
1 + f needs the time estimate to land at or below 1 + f, which happens with probability about
Phi(-(ln r - ln(1 + f)) / se) (under one half at r = 1 + f, under 2.5% once ln r - ln(1 + f) > 2 se), and
rounds shrink se; rejecting an unchanged kernel needs a time fail (controlled for false discoveries, and
measured in a design that pairs base and head in time) or a cost fail (exact: an unchanged kernel runs the
same instructions).
"""

from __future__ import annotations

from dataclasses import dataclass

from gate.domain import Decision, Signal
from gate.stats.estimate import Estimate


@dataclass(frozen=True, kw_only=True)
class Outcome:
    decision: Decision
    signal: Signal
    why: str  # what decided, for the row's reason


def time_questions(estimate: Estimate) -> bool:
    """True when time says slower: its point estimate is above 1 + the fail margin."""
    return estimate.ratio > 1 + estimate.fail_margin


def combine(
    time: Decision,
    estimate: Estimate,
    *,
    cost: Decision | None = None,
    cost_error: str | None = None,
) -> Outcome:
    """The row's decision from its time decision (with its estimate) and its cost decision (None: no cost)."""
    if cost is Decision.FAIL:
        return Outcome(decision=Decision.FAIL, signal=Signal.COST, why="cost fails")
    if time is Decision.FAIL:
        return Outcome(decision=Decision.FAIL, signal=Signal.TIME, why="time fails")
    if cost_error:
        return Outcome(decision=Decision.ERROR, signal=Signal.COST, why=f"no cost: {cost_error}")
    if cost is Decision.PASS:
        if time_questions(estimate):
            return Outcome(
                decision=Decision.INCONCLUSIVE,
                signal=Signal.TIME,
                why=f"cost passes, but time's estimate is above the {estimate.fail_margin:.1%} fail margin: "
                "not passed by cost",
            )
        return Outcome(
            decision=Decision.PASS, signal=Signal.COST, why="cost passes, time does not question it"
        )
    return Outcome(decision=time, signal=Signal.TIME, why=f"time {time}")
