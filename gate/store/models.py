"""The results store's tables (SQLAlchemy 2 declarative). Wire schemas live in ``gate.api.schemas``.

A result's identity is (machine, commit, placement, software environment, benchmark, params): placement and
software are rows of their own, referenced by every run, so results of different placements are never mixed.
``CellSummary`` holds each cell's samples reduced once when results arrive (``gate.stats.Summary``), so an
evaluation reads summaries, never raw samples.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    text,
    true,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

from gate.domain.vocabulary import Decision, Kind, Signal, Status, Verdict
from gate.store.columns import UtcDateTime, Vocabulary, now


class Base(DeclarativeBase):
    type_annotation_map = {dict: JSON, list: JSON, datetime: UtcDateTime()}  # noqa: RUF012 (SQLAlchemy API)


class Machine(Base):
    __tablename__ = "machine"
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)
    fingerprint_hash: Mapped[str] = mapped_column(String(64))
    fingerprint: Mapped[dict]
    asv_machine: Mapped[dict]
    first_seen: Mapped[datetime] = mapped_column(default=now)
    last_seen: Mapped[datetime] = mapped_column(default=now)


class Environment(Base):
    """Software fingerprint: Python, numpy, numba, llvmlite, mujoco versions, threading layer."""

    __tablename__ = "environment"
    id: Mapped[int] = mapped_column(primary_key=True)
    hash: Mapped[str] = mapped_column(String(64), unique=True)
    software: Mapped[dict]


class Placement(Base):
    """CPU set, memory policy, threads and threading layer, as asked and as granted."""

    __tablename__ = "placement"
    id: Mapped[int] = mapped_column(primary_key=True)
    hash: Mapped[str] = mapped_column(String(64), unique=True)
    label: Mapped[str] = mapped_column(String(200))
    placement: Mapped[dict]


class Commit(Base):
    __tablename__ = "commit"
    id: Mapped[int] = mapped_column(primary_key=True)
    sha: Mapped[str] = mapped_column(String(40), unique=True)
    first_seen: Mapped[datetime] = mapped_column(default=now)


class Run(Base):
    """One asv result file (a commit in one environment on one machine) and its sidecar records."""

    __tablename__ = "run"
    __table_args__ = (
        UniqueConstraint("machine_id", "commit_id", "env_name", "placement_id"),
        Index("ix_run_machine_started", "machine_id", "started_at"),
    )
    id: Mapped[int] = mapped_column(primary_key=True)
    machine_id: Mapped[int] = mapped_column(ForeignKey("machine.id"))
    commit_id: Mapped[int] = mapped_column(ForeignKey("commit.id"), index=True)
    environment_id: Mapped[int] = mapped_column(ForeignKey("environment.id"))
    placement_id: Mapped[int] = mapped_column(ForeignKey("placement.id"))
    env_name: Mapped[str] = mapped_column(String(200))
    source: Mapped[str] = mapped_column(String(40))
    digest: Mapped[str] = mapped_column(String(64))
    fingerprint_hash: Mapped[str] = mapped_column(
        String(64)
    )  # the hardware this run saw (gate.meter.fingerprint)
    started_at: Mapped[datetime]
    uploaded_at: Mapped[datetime] = mapped_column(default=now)
    # what it measured and with what (gate.provenance ids, meter_commit, problems); None: not recorded
    provenance: Mapped[dict | None] = mapped_column(default=None)
    results: Mapped[list[Result]] = relationship(back_populates="run", cascade="all, delete-orphan")


class Result(Base):
    """One benchmark at one parameter combination in one run, with its raw samples (one list per process)."""

    __tablename__ = "result"
    __table_args__ = (Index("ix_result_cell", "benchmark", "task", "impl", "num_envs", "threads"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("run.id", ondelete="CASCADE"), index=True)
    benchmark: Mapped[str] = mapped_column(String(200))
    task: Mapped[str] = mapped_column(String(64))
    impl: Mapped[str] = mapped_column(String(64))
    num_envs: Mapped[int | None]
    threads: Mapped[int | None]
    status: Mapped[Status] = mapped_column(Vocabulary(Status, 16))  # ok | failed
    unit: Mapped[str] = mapped_column(String(32))
    value: Mapped[float | None] = mapped_column(Float)
    samples: Mapped[list]
    message: Mapped[str] = mapped_column(Text, default="", server_default="")  # why a failed one failed
    run: Mapped[Run] = relationship(back_populates="results")


class CellSummary(Base):
    """Every run's samples of one cell on one machine, commit and placement, reduced (log units)."""

    __tablename__ = "cell_summary"
    __table_args__ = (
        UniqueConstraint(
            "machine_id", "commit_id", "placement_id", "benchmark", "task", "impl", "num_envs", "threads"
        ),
        Index("ix_cell_summary_lookup", "commit_id", "machine_id"),
        Index("ix_cell_summary_history", "machine_id", "benchmark", "task", "impl", "num_envs", "threads"),
    )
    id: Mapped[int] = mapped_column(primary_key=True)
    machine_id: Mapped[int] = mapped_column(ForeignKey("machine.id"))
    commit_id: Mapped[int] = mapped_column(ForeignKey("commit.id"))
    placement_id: Mapped[int] = mapped_column(ForeignKey("placement.id"))
    benchmark: Mapped[str] = mapped_column(String(200))
    task: Mapped[str] = mapped_column(String(64))
    impl: Mapped[str] = mapped_column(String(64))
    num_envs: Mapped[int] = mapped_column(Integer, default=0)  # 0: the benchmark has no num_envs
    threads: Mapped[int] = mapped_column(Integer, default=0)
    status: Mapped[Status] = mapped_column(Vocabulary(Status, 16))
    message: Mapped[str] = mapped_column(Text, default="")
    center: Mapped[float | None] = mapped_column(Float)
    se: Mapped[float | None] = mapped_column(Float)
    between_se: Mapped[float | None] = mapped_column(Float)
    low: Mapped[float | None] = mapped_column(Float)
    high: Mapped[float | None] = mapped_column(Float)
    samples: Mapped[int] = mapped_column(Integer, default=0)
    groups: Mapped[int] = mapped_column(Integer, default=0)
    updated_at: Mapped[datetime] = mapped_column(default=now)


class Evaluation(Base):
    """The gate's verdict for (base, head), with the policy that judged it and where that policy came from."""

    __tablename__ = "evaluation"
    __table_args__ = (
        Index("ix_evaluation_pair", "base_commit_id", "head_commit_id", "id"),
        Index("ix_evaluation_head", "head_commit_id", "id"),
    )
    id: Mapped[int] = mapped_column(primary_key=True)
    base_commit_id: Mapped[int] = mapped_column(ForeignKey("commit.id"))
    head_commit_id: Mapped[int] = mapped_column(ForeignKey("commit.id"))
    verdict: Mapped[Verdict] = mapped_column(Vocabulary(Verdict, 16))
    policy_source: Mapped[str] = mapped_column(Text)
    policy: Mapped[dict]
    reasons: Mapped[list]
    created_at: Mapped[datetime] = mapped_column(default=now)
    # False: an ad-hoc evaluation a token asked for (POST /api/evaluations without the admin role), kept apart
    # from the verdict the bot, the dashboard and GET /api/verdicts read.
    official: Mapped[bool] = mapped_column(Boolean, default=True, server_default=true())
    requested_by: Mapped[str | None] = mapped_column(String(200))  # the token's name, for an asked-for one
    # the acceptances on record for the head when it was judged (gate.domain.evaluations.Acceptance, with their
    # rows counted)
    acceptances: Mapped[list | None] = mapped_column(default=None)
    base_commit: Mapped[Commit] = relationship(foreign_keys=[base_commit_id], lazy="joined")
    head_commit: Mapped[Commit] = relationship(foreign_keys=[head_commit_id], lazy="joined")
    comparisons: Mapped[list[Comparison]] = relationship(
        back_populates="evaluation", cascade="all, delete-orphan", order_by="Comparison.id"
    )

    @property
    def base_sha(self) -> str:
        return self.base_commit.sha

    @property
    def head_sha(self) -> str:
        return self.head_commit.sha


class Comparison(Base):
    """One cell of an evaluation: B/A ratio with its interval and the decision."""

    __tablename__ = "comparison"
    id: Mapped[int] = mapped_column(primary_key=True)
    evaluation_id: Mapped[int] = mapped_column(ForeignKey("evaluation.id", ondelete="CASCADE"), index=True)
    machine: Mapped[str] = mapped_column(String(200))
    kind: Mapped[Kind] = mapped_column(Vocabulary(Kind, 32))
    task: Mapped[str] = mapped_column(String(64))
    num_envs: Mapped[int | None]
    threads: Mapped[int | None]
    impl: Mapped[str] = mapped_column(String(64))  # B
    baseline: Mapped[str] = mapped_column(String(64))  # A: an implementation, or "base" for head_vs_base
    detail: Mapped[str] = mapped_column(String(200), default="")
    ratio: Mapped[float | None] = mapped_column(Float)
    low: Mapped[float | None] = mapped_column(Float)
    high: Mapped[float | None] = mapped_column(Float)
    margin: Mapped[float] = mapped_column(Float)
    p_value: Mapped[float | None] = mapped_column(Float)
    q_value: Mapped[float | None] = mapped_column(Float)
    samples: Mapped[int] = mapped_column(Integer, default=0)
    groups: Mapped[int] = mapped_column(Integer, default=0)
    decision: Mapped[Decision] = mapped_column(Vocabulary(Decision, 16))
    signal: Mapped[Signal] = mapped_column(Vocabulary(Signal, 16), default=Signal.TIME, server_default="time")
    cost_ratio: Mapped[float | None] = mapped_column(Float)  # B/A of the policy's cost_metric, when measured
    reason: Mapped[str] = mapped_column(Text, default="")
    evaluation: Mapped[Evaluation] = relationship(back_populates="comparisons")


class Calibration(Base):
    """A machine's A/A noise floor and minimum detectable effect, per comparison design and thread count."""

    __tablename__ = "calibration"
    __table_args__ = (UniqueConstraint("machine_id", "design", "threads"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    machine_id: Mapped[int] = mapped_column(ForeignKey("machine.id"))
    design: Mapped[str] = mapped_column(String(32))  # unpaired | paired | cost:<metric>
    threads: Mapped[int]
    noise_floor: Mapped[float] = mapped_column(Float)
    mde: Mapped[float] = mapped_column(Float)
    cells: Mapped[int]
    commit_sha: Mapped[str] = mapped_column(String(40))
    computed_at: Mapped[datetime] = mapped_column(default=now)


ROLES = ("runner", "admin")  # runner: uploads results; admin: also writes official verdicts


class Token(Base):
    """A bearer token; only its SHA-256 is stored. A name is unique among tokens not revoked."""

    __tablename__ = "token"
    __table_args__ = (
        Index(
            "ix_token_live_name",
            "name",
            unique=True,
            sqlite_where=text("NOT revoked"),
            postgresql_where=text("NOT revoked"),
        ),
    )
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    hash: Mapped[str] = mapped_column(String(64), unique=True)
    machine: Mapped[str | None] = mapped_column(String(200))  # uploads only for this machine; None: any
    role: Mapped[str] = mapped_column(String(16), default="runner", server_default="runner")
    created_at: Mapped[datetime] = mapped_column(default=now)
    revoked: Mapped[bool] = mapped_column(Boolean, default=False)


class WebhookDelivery(Base):
    """A GitHub webhook delivery already handled (``X-GitHub-Delivery``): redeliveries are answered, not redone."""

    __tablename__ = "webhook_delivery"
    id: Mapped[int] = mapped_column(primary_key=True)
    delivery: Mapped[str] = mapped_column(String(100), unique=True)
    event: Mapped[str] = mapped_column(String(64))
    action: Mapped[str] = mapped_column(String(64), default="")
    received_at: Mapped[datetime] = mapped_column(default=now)


class PullRequest(Base):
    """A pull request the bot watches; ``comment_id`` is its one verdict comment, edited in place."""

    __tablename__ = "pull_request"
    __table_args__ = (UniqueConstraint("repo", "number"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    repo: Mapped[str] = mapped_column(String(200))  # owner/name
    number: Mapped[int]
    title: Mapped[str] = mapped_column(Text, default="")
    base_ref: Mapped[str] = mapped_column(String(200))
    base_sha: Mapped[str] = mapped_column(String(40))
    head_sha: Mapped[str] = mapped_column(String(40))
    installation_id: Mapped[int | None] = mapped_column(BigInteger)  # GitHub App installation, if any
    comment_id: Mapped[int | None] = mapped_column(BigInteger)
    comment_digest: Mapped[str] = mapped_column(String(64), default="")
    event_at: Mapped[datetime | None]  # the newest event's pull_request.updated_at: older events are ignored
    updated_at: Mapped[datetime] = mapped_column(default=now)


class PullCheck(Base):
    """The gate's commit status for one head of a pull request, as decided and as last posted to GitHub."""

    __tablename__ = "pull_check"
    __table_args__ = (UniqueConstraint("pull_id", "head_sha"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    pull_id: Mapped[int] = mapped_column(ForeignKey("pull_request.id", ondelete="CASCADE"), index=True)
    base_sha: Mapped[str] = mapped_column(String(40))
    head_sha: Mapped[str] = mapped_column(String(40), index=True)
    # the commit judged for the head (``gate.pair``): the head merged into the base when it is behind it
    judged_sha: Mapped[str | None] = mapped_column(String(40), index=True)
    state: Mapped[str] = mapped_column(String(16), default="pending")  # pending | success | failure | error
    description: Mapped[str] = mapped_column(Text, default="")
    evaluation_id: Mapped[int | None]
    posted: Mapped[str] = mapped_column(Text, default="")  # state + description last posted
    deadline: Mapped[datetime]
    created_at: Mapped[datetime] = mapped_column(default=now)
    settled_at: Mapped[datetime | None]
    lease_until: Mapped[datetime | None]  # a worker is syncing this check until then: one sync at a time
    pull: Mapped[PullRequest] = relationship(lazy="joined")


class BotJob(Base):
    """The bot's queue: a check to bring up to date on GitHub. Webhooks and uploads only insert rows here."""

    __tablename__ = "bot_job"
    __table_args__ = (Index("ix_bot_job_due", "done_at", "due_at"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    check_id: Mapped[int] = mapped_column(ForeignKey("pull_check.id", ondelete="CASCADE"), index=True)
    reason: Mapped[str] = mapped_column(String(64))  # webhook | upload | deadline | retry
    due_at: Mapped[datetime] = mapped_column(default=now)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    error: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(default=now)
    done_at: Mapped[datetime | None]


class PullCommand(Base):
    """A ``/fusegate`` command in a pull request comment (``gate.acceptance``), as the webhook received it: the
    worker answers it once (``handled_at``, ``answers``). ``head_sha`` is the PR's head when it arrived."""

    __tablename__ = "pull_command"
    __table_args__ = (Index("ix_pull_command_pending", "pull_id", "handled_at"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    pull_id: Mapped[int] = mapped_column(ForeignKey("pull_request.id", ondelete="CASCADE"))
    comment_id: Mapped[int] = mapped_column(BigInteger)
    login: Mapped[str] = mapped_column(String(100))
    body: Mapped[str] = mapped_column(Text)
    url: Mapped[str] = mapped_column(Text, default="")
    action: Mapped[str] = mapped_column(String(16))  # created | edited
    head_sha: Mapped[str] = mapped_column(String(40))
    commented_at: Mapped[datetime]
    received_at: Mapped[datetime] = mapped_column(default=now)
    handled_at: Mapped[datetime | None]
    answers: Mapped[list] = mapped_column(default=list)  # [{"command", "text", "ok"}], one per command line


class RegressionAcceptance(Base):
    """A regression accepted on record (``gate.domain.evaluations.Acceptance``): one cell of one pull request's
    head, who accepted it, why, from which comment, and the row's figures when accepted."""

    __tablename__ = "acceptance"
    __table_args__ = (Index("ix_acceptance_head", "head_sha", "recorded_at"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    repo: Mapped[str] = mapped_column(String(200))
    number: Mapped[int]
    head_sha: Mapped[str] = mapped_column(String(40))
    machine: Mapped[str] = mapped_column(String(200))
    kind: Mapped[Kind] = mapped_column(Vocabulary(Kind, 32))
    task: Mapped[str] = mapped_column(String(64))
    impl: Mapped[str] = mapped_column(String(64))
    num_envs: Mapped[int | None]
    threads: Mapped[int | None]
    login: Mapped[str] = mapped_column(String(100))
    reason: Mapped[str] = mapped_column(Text)
    accepted_at: Mapped[datetime]
    comment_id: Mapped[int | None] = mapped_column(BigInteger)
    comment_url: Mapped[str] = mapped_column(Text, default="")
    ratio: Mapped[float | None] = mapped_column(Float)
    high: Mapped[float | None] = mapped_column(Float)
    cost_ratio: Mapped[float | None] = mapped_column(Float)
    recorded_at: Mapped[datetime] = mapped_column(
        default=now
    )  # when stored: verdicts judged before are stale
