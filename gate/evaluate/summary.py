"""The verdict read in ten seconds: the reviewer's first line, then one finding per implementation that decided it.

    reject: g1_walk handwritten 1.98x slower at 2 threads (time); nothing else changed
    approve: g1_walk handwritten 2.44x faster at 2 threads; trade-off: +1.6% instructions at 1 thread, time 0.99x;
        nothing else changed

``headline`` is that first line (``gate.evaluate.headline``); ``summarize`` builds the whole summary once
(``VerdictSummary``): the headline, the findings that decided the verdict (each implementation and kind: what,
where, how much, which signal), the improvements, the trade-offs, the undecided rows and what would decide them,
and the passes counted. Built from the stored rows (``ComparisonRecord``), so every renderer (the terminal, the
step summary, the PR comment, the dashboard) says the same for the same verdict. A row's ratio is head/base or
implementation/baseline: above 1 is slower.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from gate import acceptance
from gate.domain.evaluations import Acceptance, ComparisonRecord
from gate.domain.vocabulary import Decision, Kind, Signal, Verdict
from gate.evaluate.headline import against, groups, headline, improvements, traded, what

__all__ = ["MARK", "RATIO", "Finding", "VerdictSummary", "headline", "of", "summarize"]

RATIO = "ratios are head/base or implementation/baseline: above 1 is slower"
NAMED = {Kind.CORRECTNESS, Kind.METER, Kind.MACHINE}  # rows a figure cannot say: their reason does
# A finding's word in front of its line, the same in every rendering.
MARK = {
    Decision.FAIL: "fail",
    Decision.ERROR: "error",
    Decision.INCONCLUSIVE: "open",
    Decision.PASS: "better",
    Decision.ACCEPTED: "accepted",
}
TRADED = "trade"  # a trade-off's mark, passed or failed
TRADE_OFF = "trade-off"  # a trade-off finding's word


@dataclass(frozen=True, kw_only=True)
class Finding:
    """One implementation's rows of one kind with one decision, said as a line: what, where, how much, by what."""

    decision: Decision
    word: str  # slower | faster | undecided | error | failed | runs again
    what: str  # "g1_walk assembled", "g1_walk assembled collector step", a machine
    against: str  # "the base", "handwritten", ...
    scales: tuple[int, ...]
    threads: tuple[int, ...]
    placements: tuple[str, ...]  # "machine" or "machine placement"
    worst: ComparisonRecord  # the row whose figure is quoted: the most extreme one
    rows: tuple[ComparisonRecord, ...]
    then: str = ""  # what would decide it (undecided rows)

    @property
    def where(self) -> str:
        parts = []
        if self.scales:
            parts.append("N=" + ", ".join(map(str, self.scales)))
        if self.threads:
            parts.append(f"{', '.join(map(str, self.threads))} thr")
        parts.append(", ".join(self.placements))
        if len(self.rows) > 1:
            parts.append(f"{len(self.rows)} rows")
        return " · ".join(p for p in parts if p)

    @property
    def how_much(self) -> str:
        """The worst row's figure in words: ``1.98x slower [1.90, 2.05] by time``, or its reason when no figure
        says it (correctness, meter, machine, missing data)."""
        r = self.worst
        if r.kind in NAMED or (r.ratio is None and r.cost_ratio is None):
            return r.reason
        if self.traded:
            beside = r.reason.partition("beside ")[2].partition(";")[0]
            text = "" if r.cost_ratio is None else f"instructions {r.cost_ratio - 1:+.1%}, "
            text += "" if r.ratio is None else f"time {r.ratio:.2f}x [{r.low:.2f}, {r.high:.2f}] not slower"
            text += f", for {beside}" if beside else ""
            if r.decision == Decision.FAIL:
                text += (
                    '; rejected by tradeoffs = "reject" (set it to "approve" on the base branch to accept)'
                )
            return text
        if r.signal == Signal.COST and r.cost_ratio is not None and self.word != "faster":
            text = f"instructions {r.cost_ratio:.4f}x ({r.cost_ratio - 1:+.1%}) by cost"
            if r.ratio is not None:
                text += f"; time {r.ratio:.2f}x"
            return text
        if r.ratio is None:
            return r.reason
        word = self.word if self.word in ("slower", "faster") else ("slower" if r.ratio > 1 else "faster")
        interval = f" [{r.low:.2f}, {r.high:.2f}]" if r.low is not None and r.high is not None else ""
        if word == "faster":  # a factor above 1, faster in time whatever signal passed the row
            return f"{1 / r.ratio:.2f}x faster by time, head/base {r.ratio:.2f}{interval}"
        return f"{r.ratio:.2f}x {word}{interval} by {r.signal}"

    @property
    def mark(self) -> str:
        """The finding's word in front of its line, the same in every rendering."""
        return TRADED if self.traded else MARK[self.decision]

    @property
    def traded(self) -> bool:
        """A trade-off finding (``gate.evaluate.tradeoff``), passed or failed by the policy."""
        return self.word == TRADE_OFF


@dataclass(frozen=True, kw_only=True)
class VerdictSummary:
    """What every rendering of a verdict says, in the order it says it."""

    verdict: Verdict
    headline: str
    decided: tuple[Finding, ...]  # the rows that decided the verdict: fails (reject), errors (error)
    accepted: tuple[Finding, ...]  # fails accepted on record (gate.acceptance): who and why in ``then``
    improved: tuple[Finding, ...]  # implementations faster than the base, or running again
    traded: tuple[Finding, ...]  # trade-offs passed by the policy (a rejected one is among ``decided``)
    undecided: tuple[Finding, ...]
    passed: int
    passed_by: tuple[tuple[str, int], ...]  # (signal, rows), most first
    total: int
    reason: str  # the verdict's own sentence (the last of the evaluation's reasons)
    policy: str

    @property
    def listed(self) -> tuple[Finding, ...]:
        """The findings a rendering lists, in order: what decided the verdict (for inconclusive, the undecided
        rows), the other fails and errors, then the improvements and the trade-offs."""
        if self.verdict == Verdict.INCONCLUSIVE:
            return (*self.undecided, *self.accepted, *self.improved, *self.traded)
        others = tuple(f for f in self.undecided if f.decision != Decision.INCONCLUSIVE)
        return (*self.decided, *others, *self.accepted, *self.improved, *self.traded)

    @property
    def open_note(self) -> str:
        """One sentence for undecided rows that did not decide the verdict (a reject or an error does not wait
        for them); empty when there are none or they are listed."""
        rows = [r for f in self.undecided if f.decision == Decision.INCONCLUSIVE for r in f.rows]
        if not rows or self.verdict == Verdict.INCONCLUSIVE:
            return ""
        names = sorted({f.what for f in self.undecided if f.decision == Decision.INCONCLUSIVE})
        return f"{len(rows)} rows undecided ({', '.join(names)}): the {self.verdict} does not wait for them"

    @property
    def counts(self) -> str:
        """``52 rows: 6 fail, 46 pass (27 cost, 19 sources)``."""
        tally = Counter(r.decision for f in (*self.decided, *self.undecided, *self.accepted) for r in f.rows)
        shown = (Decision.FAIL, Decision.ERROR, Decision.INCONCLUSIVE, Decision.ACCEPTED)
        parts = [f"{tally[d]} {d}" for d in shown if tally[d]]
        by = ", ".join(f"{n} {signal}" for signal, n in self.passed_by)
        parts.append(f"{self.passed} pass" + (f" ({by})" if by else ""))
        return f"{self.total} rows: " + ", ".join(parts)


def _worst(rows: list[ComparisonRecord], word: str) -> ComparisonRecord:
    def figure(r: ComparisonRecord) -> float:
        if r.signal == Signal.COST and r.cost_ratio is not None and word != "faster":
            return r.cost_ratio
        return r.ratio if r.ratio is not None else 1.0

    return min(rows, key=figure) if word == "faster" else max(rows, key=figure)


def _placement(r: ComparisonRecord) -> str:
    """The row's placement: its detail, or what a best-thread row's detail holds in brackets."""
    if r.kind == Kind.BEST_THREADS:
        return r.detail.rpartition("[")[2].rstrip("]") if "[" in r.detail else ""
    return "" if r.kind in NAMED else r.detail


def _finding(rows: list[ComparisonRecord], decision: Decision, word: str, then: str = "") -> Finding:
    first = rows[0]
    placements = sorted({" ".join(x for x in (r.machine, _placement(r)) if x) for r in rows})
    return Finding(
        decision=decision,
        word=word,
        what=what(first),
        against=against(first) if first.kind not in NAMED else first.kind.value,
        scales=tuple(sorted({r.num_envs for r in rows if r.num_envs})),
        threads=tuple(sorted({r.threads for r in rows if r.threads})),
        placements=tuple(placements),
        worst=_worst(rows, word),
        rows=tuple(rows),
        then=then,
    )


def _undecided(rows: list[ComparisonRecord], max_rounds: int | None) -> str:
    fewest = min(r.groups for r in rows)
    if max_rounds is None:
        return f"more rounds would decide ({fewest} processes so far)"
    if fewest < max_rounds:
        return f"more rounds would decide (from {fewest} of at most {max_rounds} processes)"
    return f"the round budget ({max_rounds} processes) is spent: inconclusive is not a pass"


def summarize(
    verdict: Verdict | str,
    comparisons: Sequence[ComparisonRecord],
    *,
    reasons: Sequence[str] = (),
    policy: str = "",
    max_rounds: int | None = None,
    acceptances: Sequence[Acceptance] = (),
) -> VerdictSummary:
    """The summary of one evaluation: ``headline`` first, then the findings, the undecided rows and the passes.
    ``acceptances`` (the evaluation's) say who accepted an accepted finding and why, and what a fail worse than
    its acceptance was accepted at."""
    verdict = Verdict(verdict)
    rows = list(comparisons)
    by = acceptance.newest(acceptances)
    deciding = {Verdict.REJECT: Decision.FAIL, Verdict.ERROR: Decision.ERROR}.get(verdict)

    def word(g: list[ComparisonRecord]) -> str:
        if g[0].kind in NAMED or deciding != Decision.FAIL:
            return str(deciding)
        return TRADE_OFF if traded(g[0]) else "slower"

    decided = [
        _finding(g, deciding, word(g), _on_record(g, by, worse=True))
        for g in groups([r for r in rows if r.decision == deciding], by_tradeoff=True).values()
    ]
    accepted = [
        _finding(g, Decision.ACCEPTED, str(Decision.ACCEPTED), _on_record(g, by))
        for g in groups([r for r in rows if r.decision == Decision.ACCEPTED]).values()
    ]
    # a failed row beside an error verdict, or an error beside a reject, still needs reading: listed as undecided
    other = [
        r
        for r in rows
        if r.decision in (Decision.FAIL, Decision.ERROR, Decision.INCONCLUSIVE) and r.decision != deciding
    ]
    undecided = [
        _finding(g, g[0].decision, "undecided", _undecided(g, max_rounds))
        if g[0].decision == Decision.INCONCLUSIVE
        else _finding(g, g[0].decision, str(g[0].decision))
        for g in groups(other, by_decision=True).values()
    ]
    better, repaired = improvements(rows, {(r.task, r.impl) for f in decided if not f.traded for r in f.rows})
    improved = [_finding(g, Decision.PASS, "faster") for g in better]
    improved += [_finding(g, Decision.PASS, "runs again") for g in repaired]
    passed_traded = [r for r in rows if traded(r) and r.decision == Decision.PASS]
    traded_findings = [_finding(g, Decision.PASS, TRADE_OFF) for g in groups(passed_traded).values()]
    passes = [r for r in rows if r.decision == Decision.PASS]
    by = Counter(str(r.signal) for r in passes)
    return VerdictSummary(
        verdict=verdict,
        headline=headline(verdict, rows),
        decided=tuple(decided),
        accepted=tuple(accepted),
        improved=tuple(improved),
        traded=tuple(traded_findings),
        undecided=tuple(undecided),
        passed=len(passes),
        passed_by=tuple(by.most_common()),
        total=len(rows),
        reason=reasons[-1] if reasons else "",
        policy=policy,
    )


def _on_record(rows: list[ComparisonRecord], by: dict, *, worse: bool = False) -> str:
    """Who accepted the rows and why (``worse``: what a fail worse than its acceptance was accepted at)."""
    found = [by[acceptance.key(r)] for r in rows if acceptance.key(r) in by]
    if not found:
        return ""
    a = found[0]
    if worse:
        return f"worse than accepted by @{a.login}" + (f" (up to {a.high:.2f})" if a.high is not None else "")
    return f"by @{a.login}: {a.reason}"


def of(evaluation) -> VerdictSummary:
    """The summary of a stored evaluation (``EvaluationRecord`` or the API's ``EvaluationOut``)."""
    budget = (evaluation.policy or {}).get("max_rounds")
    return summarize(
        evaluation.verdict,
        evaluation.comparisons,
        reasons=evaluation.reasons,
        policy=evaluation.policy_source,
        max_rounds=int(budget) if budget else None,
        acceptances=getattr(evaluation, "acceptances", None) or (),
    )
