"""Which signal decides a row: its time interval, its exact cost, or both.

A row with a time estimate may also carry the exact cost ratio of the same kernel and scale at 1 thread
(callgrind; docs/gate.md). The two signals see different things: cost sees every added instruction at any
thread count, exactly, and nothing that is not an instruction (a serial loop, false sharing, oversubscription,
a cache-hostile order); time sees everything, with noise. Nor does an instruction count say which way time
goes: a parallel loop, vectorisation, unrolling or a parallel reduction often runs more instructions in less
time. So, per row, with f its fail margin (the machine's A/A floor when larger):

| time | cost fails | cost passes | cost undecided or absent | cost failed to measure |
|---|---|---|---|---|
| faster: a pass, high < 1/(1+f), q_faster < alpha/2, paired in time | **pass** by time | pass by cost | pass by time | error |
| not yet faster: estimate < 1/(1+f), paired in time | **inconclusive** (time questions it) | pass by cost | time's decision | error |
| pass: high <= 1 + m, estimate >= 1/(1+f) or raw times | fail by cost | pass by cost | pass by time | error |
| inconclusive, 1/(1+f) <= estimate <= 1 + f (or raw times) | fail by cost | pass by cost | inconclusive | error |
| inconclusive, estimate > 1 + f | fail by cost | inconclusive (time questions it) | inconclusive | error |
| fail: low > 1 + f, q < alpha/2 | fail by cost | fail by time | fail by time | fail by time |

- **fail** when either signal fails, except that a cost fail does not fail a row whose own time is *faster*: a
  cost fail is exact, and what catches +1% changes time cannot see, but it is no evidence of a slower kernel
  when the same row's time shows, with the confidence a time fail needs, a kernel faster beyond the fail margin;
- **faster** needs a design paired in time (the lockstep pass, in-process pairs): raw times of two moments
  never clear a cost fail (a fast phase of the machine can look like a speedup, as a slow one like a regression);
- a cost fail is **questioned** by a time paired in time whose estimate says faster beyond the fail margin
  but is not yet *faster* (too few processes, or short of false-discovery control): the row is inconclusive and
  gets rounds, the mirror of a cost pass questioned by a time that says slower. Rounds end it passed by time
  (*faster*), failed by cost (the estimate came back above 1/(1+f)) or inconclusive at the budget, never
  approved on the cost fail's account;
- each row is judged by its own time: a 2-thread speedup never clears the cost fail of the 1-thread row here;
  across rows, a cost fail whose time is not slower beside the same kernel *faster* at another thread count is a
  trade-off, which the policy passes or fails (``gate.evaluate.tradeoff``, after every row is combined);
- **pass** when time passes, or when cost passes and **time does not question it**: time's point estimate is
  at most 1 + the fail margin. A row whose time says slower is never passed by cost: it is inconclusive, gets
  rounds, and ends failed by time or inconclusive at the budget;
- **inconclusive** otherwise (time undecided, and cost undecided or absent);
- **error** when the cost pass that backs the row failed to measure and time did not fail: nothing decided it.

What it bounds: approving a change whose true time ratio is r > 1 + f needs the time estimate to land at or
below 1 + f, which happens with probability about Phi(-(ln r - ln(1 + f)) / se) (under one half at r = 1 + f,
under 2.5% once ln r - ln(1 + f) > 2 se), and rounds shrink se; a cost fail cleared by a speedup needs more:
the whole interval below 1/(1 + f), whose chance for a kernel whose true ratio is 1 or more is below alpha/2 per
row, and a "faster" that survives Benjamini-Hochberg over the family (the expected share of false "faster" rows
among those that clear a cost fail is at most alpha/2). A questioned cost fail only ever turns a reject into an
inconclusive, which never approves: the bound on approving a regression is unchanged. Rejecting an unchanged kernel needs a time fail
(controlled for false discoveries, and measured in a design that pairs base and head in time) or a cost fail
(exact: an unchanged kernel runs the same instructions).
"""

from __future__ import annotations

from dataclasses import dataclass

from gate.domain.vocabulary import Decision, Signal
from gate.stats.estimate import Estimate


@dataclass(frozen=True, kw_only=True)
class Outcome:
    decision: Decision
    signal: Signal
    why: str  # what decided, for the row's reason


def time_questions(estimate: Estimate) -> bool:
    """True when time says slower: its point estimate is above 1 + the fail margin."""
    return estimate.ratio > 1 + estimate.fail_margin


def time_says_faster(estimate: Estimate) -> bool:
    """True when time says faster: its point estimate is below 1 / (1 + the fail margin)."""
    return estimate.ratio < 1 / (1 + estimate.fail_margin)


def combine(
    time: Decision,
    estimate: Estimate,
    *,
    cost: Decision | None = None,
    cost_error: str | None = None,
    faster: bool | None = None,
) -> Outcome:
    """The row's decision from its time decision (with its estimate), whether its time is *faster* (beyond the
    fail margin, past false-discovery control: ``gate.stats.faster``; None when its time is not paired in time
    and so can never clear a cost fail) and its cost decision (None: no cost)."""
    if cost is Decision.FAIL and faster and time is Decision.PASS:
        return Outcome(
            decision=Decision.PASS,
            signal=Signal.TIME,
            why="time faster beyond the fail margin: clears the cost fail",
        )
    if (
        cost is Decision.FAIL
        and faster is not None
        and time is not Decision.FAIL
        and time_says_faster(estimate)
    ):
        return Outcome(
            decision=Decision.INCONCLUSIVE,
            signal=Signal.TIME,
            why="cost fails, but time's estimate is faster beyond the fail margin: rounds decide",
        )
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
