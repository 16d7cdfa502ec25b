"""The records of a verdict: an evaluation, its judged cells and the regressions accepted on record."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from gate.domain.vocabulary import Decision, Kind, Signal, Verdict


@dataclass(frozen=True, kw_only=True)
class ComparisonRecord:
    """One judged cell of an evaluation (``gate.api.schemas.ComparisonOut`` on the wire)."""

    machine: str
    kind: Kind
    task: str
    num_envs: int | None
    threads: int | None
    impl: str
    baseline: str
    detail: str
    ratio: float | None
    low: float | None
    high: float | None
    margin: float
    p_value: float | None
    q_value: float | None
    samples: int
    groups: int
    decision: Decision
    signal: Signal
    cost_ratio: float | None
    reason: str

    def __post_init__(self):  # the store and the wire hand over strings: keep the enums
        for name, enum in (("kind", Kind), ("decision", Decision), ("signal", Signal)):
            object.__setattr__(self, name, enum(getattr(self, name)))


@dataclass(frozen=True, kw_only=True)
class Cell:
    """Where a judged row is, across a machine's placements: what an acceptance holds for."""

    machine: str
    kind: Kind
    task: str
    impl: str
    num_envs: int | None
    threads: int | None

    @classmethod
    def of(cls, row) -> Cell:
        """The cell of a row, a record or an acceptance (anything with these fields)."""
        return cls(
            machine=row.machine,
            kind=Kind(row.kind),
            task=row.task,
            impl=row.impl,
            num_envs=row.num_envs,
            threads=row.threads,
        )


@dataclass(frozen=True, kw_only=True)
class Acceptance:
    """A regression accepted on record (``gate.acceptance``): one cell's fail rows on one pull request's head
    commit, by a user with write access, with the reason and the row's figures when it was accepted. In an
    evaluation, ``accepted`` and ``worse`` count its rows accepted and its rows worse than when accepted."""

    repo: str
    number: int
    head_sha: str
    machine: str
    kind: Kind
    task: str
    impl: str
    num_envs: int | None
    threads: int | None
    login: str
    reason: str
    accepted_at: datetime
    comment_id: int | None = None
    comment_url: str = ""
    ratio: float | None = None  # the worst row's time ratio when accepted
    high: float | None = None  # ... its interval's upper bound
    cost_ratio: float | None = None  # ... its cost ratio, when measured
    accepted: int = 0
    worse: int = 0

    def __post_init__(self):
        object.__setattr__(self, "kind", Kind(self.kind))


@dataclass(frozen=True, kw_only=True)
class EvaluationRecord:
    """A stored verdict for (base, head), what the routes, the dashboard, the bot and the CLI work with."""

    id: int
    base_sha: str
    head_sha: str
    verdict: Verdict
    policy_source: str
    policy: dict
    reasons: list[str]
    created_at: datetime
    comparisons: list[ComparisonRecord]
    official: bool = True  # False: asked for by a token without the admin role, never the verdict served
    requested_by: str | None = None
    stale: bool = False  # results of base or head arrived after this evaluation started
    acceptances: list[Acceptance] = field(default_factory=list)  # on record for the head when it was judged

    def __post_init__(self):
        object.__setattr__(self, "verdict", Verdict(self.verdict))
