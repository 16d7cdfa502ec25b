"""Wire schemas (pydantic), separate from the tables. The CLI's --json output uses the same models."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, computed_field, field_validator

from gate.domain.vocabulary import Decision, Kind, Signal, Verdict
from gate.ingest.bundle import Bundle
from gate.web import Problem

__all__ = ["Bundle", "Problem"]


class Orm(BaseModel):
    model_config = ConfigDict(from_attributes=True)


class ComparisonOut(Orm):
    machine: str
    kind: Kind = Field(description="what the row compares (docs/gate.md#reading-a-verdict)")
    task: str
    num_envs: int | None
    threads: int | None
    impl: str
    baseline: str
    detail: str
    ratio: float | None = Field(description="B/A time ratio, above 1 is slower")
    low: float | None
    high: float | None
    margin: float
    p_value: float | None
    q_value: float | None
    samples: int
    groups: int = Field(description="benchmark processes (for paired cells) behind the estimate")
    decision: Decision
    signal: Signal = Field(
        default=Signal.NONE,
        description="what decided: cost (callgrind, exact), time (wall-time interval), none (no measurement), base "
        "(as on the base, not made worse), sources (the base's sources), baseline (the baseline changed: the "
        "implementation's own head-vs-base rows judge it), repaired (failed on the base, runs on the head) or "
        "tradeoff (a cost fail beside the same kernel faster at another thread count: the policy's tradeoffs)",
    )
    cost_ratio: float | None = Field(
        default=None, description="B/A cost ratio (policy cost_metric), when measured"
    )
    reason: str


class AcceptanceOut(Orm):
    """A regression accepted on record (docs/fleet.md#accepting-a-regression)."""

    repo: str
    number: int
    head_sha: str = Field(description="the head commit it holds for: a new push needs a new acceptance")
    machine: str
    kind: Kind
    task: str
    impl: str
    num_envs: int | None
    threads: int | None
    login: str = Field(description="who accepted it (write, maintain or admin permission on the repository)")
    reason: str
    accepted_at: datetime
    comment_id: int | None
    comment_url: str
    ratio: float | None = Field(description="the row's time ratio when accepted (the worst placement's)")
    high: float | None = Field(
        description="its interval's upper bound then: a row whose lower bound is above fails"
    )
    cost_ratio: float | None = Field(description="its cost ratio then, when measured")
    accepted: int = Field(default=0, description="in an evaluation: its failing rows it accepted")
    worse: int = Field(
        default=0, description="in an evaluation: its rows worse than when accepted (still fail)"
    )


class EvaluationOut(Orm):
    id: int
    base_sha: str
    head_sha: str
    verdict: Verdict
    policy_source: str = Field(description="where the policy came from: always the base commit")
    policy: dict
    reasons: list[str]
    created_at: datetime = Field(description="when the evaluation started reading results")
    official: bool = Field(
        default=True,
        description="true: the gate's verdict (the bot, the dashboard and GET /api/verdicts read it); false: an "
        "ad-hoc evaluation a runner token asked for, kept apart",
    )
    requested_by: str | None = Field(default=None, description="the token that asked for it, if one did")
    stale: bool = Field(
        default=False,
        description="results of base or head arrived after this evaluation started: the gate evaluates again (the "
        "bot at once; POST /api/evaluations with an admin token otherwise)",
    )
    comparisons: list[ComparisonOut]
    acceptances: list[AcceptanceOut] = Field(
        default_factory=list, description="the regressions accepted on record for the head when it was judged"
    )

    @field_validator("acceptances", mode="before")
    @classmethod
    def _none_is_empty(cls, value):  # an evaluation stored before acceptances were kept has NULL
        return [] if value is None else value

    @computed_field(
        description="the reviewer's first line: the verdict and the implementations that decided it"
    )
    @property
    def headline(self) -> str:
        from gate.evaluate.summary import headline

        return headline(self.verdict, self.comparisons)


class EvaluationSummary(Orm):
    id: int
    base_sha: str
    head_sha: str
    verdict: Verdict
    official: bool = True
    created_at: datetime


class EvaluationRequest(BaseModel):
    base: str = Field(
        min_length=1, max_length=200, description="base commit (SHA or ref known to the service's repository)"
    )
    head: str = Field(min_length=1, max_length=200, description="head commit")
    impl: list[Annotated[str, Field(min_length=1, max_length=64)]] = Field(
        default_factory=list,
        max_length=16,
        description="extra implementations to judge (stricter only); each must have results for head",
    )


class MachineOut(Orm):
    name: str
    fingerprint_hash: str
    fingerprint: dict
    first_seen: datetime
    last_seen: datetime


class RunOut(BaseModel):
    id: int
    machine: str
    commit: str
    env_name: str
    placement: str
    started_at: datetime
    uploaded_at: datetime


class UploadOut(BaseModel):
    stored: int = Field(description="runs stored (new or replacing changed content)")
    unchanged: int = Field(description="runs already stored with identical content")
    results: int
    evaluations: list[EvaluationSummary] = Field(
        description="evaluations recomputed because their commits changed"
    )


class CheckOut(Orm):
    base_sha: str
    head_sha: str
    state: str = Field(description="the commit status: pending | success | failure | error")
    description: str
    evaluation_id: int | None
    deadline: datetime = Field(description="pending past this with machines missing becomes error")
    created_at: datetime
    settled_at: datetime | None


class PullOut(Orm):
    repo: str
    number: int
    title: str
    base_ref: str
    base_sha: str
    head_sha: str
    checks: list[CheckOut] = Field(description="one per head the pull request has had, newest first")
    acceptances: list[AcceptanceOut] = Field(
        default_factory=list, description="the regressions accepted on record for it, newest first"
    )


class RoundsOut(BaseModel):
    base_sha: str
    head_sha: str
    machine: str
    more: bool = Field(
        description="true: run more benchmark rounds of base and head on this machine and upload"
    )
    stale: bool = Field(
        description="results arrived after this evaluation and the bot is re-evaluating: ask again shortly"
    )
    budget: int = Field(description="the policy's max_rounds (benchmark processes per cell)")
    cells: list[ComparisonOut] = Field(description="this machine's inconclusive cells still under the budget")
