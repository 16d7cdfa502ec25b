"""The records a validated upload becomes (``gate.ingest``): one run and its results."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from gate.domain.vocabulary import Status


@dataclass(frozen=True, kw_only=True)
class ResultRecord:
    benchmark: str
    task: str
    impl: str
    num_envs: int | None
    threads: int | None
    status: Status  # ok or failed, never insufficient
    unit: str
    value: float | None
    samples: list[list[float]]  # one list per benchmark process
    message: str = ""  # why a failed one failed (the sidecar's failure record: asv keeps no exception text)

    def __post_init__(self):  # a caller hands over a string: keep the enum
        object.__setattr__(self, "status", Status(self.status))


@dataclass(kw_only=True)
class RunRecord:
    machine: str
    asv_machine: dict
    fingerprint: dict
    fingerprint_hash: str
    software: dict
    placement: dict
    commit: str
    env_name: str
    started_at: datetime
    digest: str
    results: list[ResultRecord] = field(default_factory=list)
    # what it measured and with what: gate.provenance ids of subject and meter, the meter's commit, problems
    provenance: dict = field(default_factory=dict)
