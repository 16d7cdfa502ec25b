"""The store's reads and writes, as keyword-only functions on a Session, by what they hold: measurements in
(``ingest``) and out (``measured``), verdicts and noise floors (``evaluations``), API tokens (``tokens``). The
bot's pull requests and the dashboard's history read in ``gate.store.pulls`` and ``gate.store.dashboard``.
Handlers never build SQL; callers use this package's names (``queries.summaries``)."""

from gate.store.queries.evaluations import (
    calibrations,
    evaluation,
    evaluation_pairs,
    evaluations,
    latest_evaluation,
    save_calibration,
    save_evaluation,
)
from gate.store.queries.ingest import IngestReport, ingest_runs, placement_label, summarize_cells
from gate.store.queries.measured import (
    SummaryView,
    commit_id,
    count_results,
    fingerprints,
    implementations,
    last_upload,
    machines,
    provenances,
    raw_samples,
    runs,
    softwares,
    summaries,
    uploads,
)
from gate.store.queries.tokens import create_token, revoke_token, token_by_secret, token_hash

__all__ = [
    "IngestReport",
    "SummaryView",
    "calibrations",
    "commit_id",
    "count_results",
    "create_token",
    "evaluation",
    "evaluation_pairs",
    "evaluations",
    "fingerprints",
    "implementations",
    "ingest_runs",
    "last_upload",
    "latest_evaluation",
    "machines",
    "placement_label",
    "provenances",
    "raw_samples",
    "revoke_token",
    "runs",
    "save_calibration",
    "save_evaluation",
    "softwares",
    "summaries",
    "summarize_cells",
    "token_by_secret",
    "token_hash",
    "uploads",
]
