"""The upload bundle: one machine's asv results and fusegate sidecar records, validated into runs.

The same bundle is what ``fusegate ingest DIR`` reads from disk and what ``POST /api/runs`` receives, so both
paths validate identically. Every problem is reported with the file and the field it is in; a bundle with any
problem is rejected whole, before anything is stored. asv's results are read by ``asv_results``, the sidecar
records by ``sidecar_records``; this module holds the envelope and puts them together into runs.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any, Literal

import pydantic_core
from pydantic import BaseModel, Field, ValidationError

from gate.domain.benchmarks import BENCHMARKS, COST_BENCHMARKS, SIDECAR_PAIRED, suite_of
from gate.domain.machines import machine_id, machine_name_problem
from gate.domain.uploads import ResultRecord, RunRecord
from gate.domain.vocabulary import Status
from gate.ingest import asv_results, sidecar_records
from gate.ingest.checks import SHA, IngestError, is_name, need, plain

__all__ = ["BUNDLE_FORMAT", "Bundle", "IngestError", "ResultFile", "parse", "runs"]

BUNDLE_FORMAT = 1


class ResultFile(BaseModel):
    path: str = Field(
        description="the file's path relative to the results directory, e.g. 'host/abc12345-env.json'"
    )
    text: str = Field(
        description="the asv result file's text as asv wrote it: asv writes NaN for skipped benchmarks, which "
        "JSON proper cannot carry, and null for failed ones, so the file travels unparsed"
    )

    def data(self) -> dict:
        try:  # asv's NaN is allowed here; pydantic-core's parser bounds the nesting depth (no RecursionError)
            data = pydantic_core.from_json(self.text, allow_inf_nan=True)
        except ValueError as exc:
            raise IngestError(self.path, "(file)", f"not JSON: {exc}") from None
        if not isinstance(data, dict):
            raise IngestError(self.path, "(file)", f"expected a JSON object, got {type(data).__name__}")
        return data  # what of it is stored is checked where it is read: names printable, numbers finite


class Bundle(BaseModel):
    """What a runner uploads: one asv machine directory and the sidecar records of its commits."""

    format: Literal[1] = Field(description="bundle format version")
    machine: dict[str, Any] = Field(description="asv's machine.json of this machine directory")
    benchmarks: dict[str, Any] = Field(description="asv's benchmarks.json (parameter names per benchmark)")
    results: list[ResultFile] = Field(min_length=1, description="asv result files")
    sidecar: list[dict[str, Any]] = Field(description="fusegate sidecar records (.asv/fusegate/*/*.jsonl)")


def parse(body: bytes | str) -> Bundle:
    """A bundle from a request body, or IngestError: JSON proper (no NaN; nesting bounded by pydantic-core's
    parser), in the shape of ``Bundle``."""
    try:
        data = pydantic_core.from_json(body, allow_inf_nan=False)
    except ValueError as exc:
        raise IngestError("(body)", "(json)", f"not JSON: {exc}") from None
    try:
        return Bundle.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(map(str, first["loc"])) or "(bundle)"
        raise IngestError(
            "(body)", where, f"{first['msg']} ({exc.error_count()} problem(s) in all)"
        ) from None


def _header(file: str, data: dict, machine_name: str) -> tuple[str, str, list[str], float]:
    """(commit, env_name, result columns, date) of one asv results file, checked."""
    version = data.get("version")
    if version != asv_results.VERSION:
        raise IngestError(
            file, "version", f"expected asv results version {asv_results.VERSION}, got {version!r}"
        )
    commit = need(data, "commit_hash", str, file)
    if not SHA.match(commit):
        raise IngestError(file, "commit_hash", f"expected a full 40-digit hex SHA, got {commit!r}")
    env_name = need(data, "env_name", str, file)
    if need(data, "params", dict, file).get("machine", machine_name) != machine_name:
        raise IngestError(
            file,
            "params.machine",
            f"{data['params']['machine']!r} is not this bundle's machine {machine_name!r}",
        )
    columns = need(data, "result_columns", list, file)
    if not all(isinstance(c, str) for c in columns):
        raise IngestError(file, "result_columns", "expected a list of column names")
    date = need(data, "date", (int, float), file)
    if not 0 < date < 4e12:  # asv writes milliseconds since the epoch
        raise IngestError(file, "date", f"not a time in milliseconds since 1970: {date!r}")
    if not is_name(env_name, 200):
        raise IngestError(file, "env_name", "must be a name of 1-200 printable characters")
    return commit, env_name, columns, date


def _results(
    bundle: Bundle, file: str, data: dict, columns: list[str], params: dict, records: list[dict]
) -> list[ResultRecord]:
    """Every result of one commit: asv's timings, the sidecar's cost pass, paired and collector records, and
    the failures asv recorded, each failure with the exception its cell raised."""
    cost = sidecar_records.cost_results(records)
    out: list[ResultRecord] = []
    for name, raw in need(data, "results", dict, file).items():
        if name not in params:
            continue
        if not isinstance(raw, list):
            raise IngestError(file, f"results.{name}", "expected a list of columns")
        row = dict(zip(columns, raw, strict=False))
        if name in SIDECAR_PAIRED:
            # The samples come from the sidecar, one list per process; a paired benchmark asv recorded as failed
            # (parity or construction) has no sidecar record: its failure is kept.
            failed = asv_results.results(name, row, params[name], file, "ratio")
            out.extend(r for r in failed if r.status == Status.FAILED)
        elif name not in COST_BENCHMARKS or cost is None:  # a cost pass in the sidecar is read whole
            meta = bundle.benchmarks[name]
            unit, repeat = meta.get("unit", "seconds"), meta.get("repeat")
            out.extend(asv_results.results(name, row, params[name], file, unit, repeat))
    out += cost or []
    out += sidecar_records.paired_results(records)
    out += sidecar_records.collector_results(records)
    failures = sidecar_records.failures(records)
    return [
        replace(
            r,
            message=r.message
            or failures.get((suite_of(r.benchmark), r.task, r.impl, r.num_envs, r.threads), ""),
        )
        if r.status == Status.FAILED
        else r
        for r in out
    ]


def _fingerprint_hash(fingerprint: dict, file: str) -> str:
    try:
        return machine_id(fingerprint)
    except KeyError as exc:
        raise IngestError(
            file, f"sidecar.machine.{exc.args[0]}", "missing from the machine fingerprint"
        ) from None
    except (AttributeError, TypeError):
        raise IngestError(
            file, "sidecar.machine.numa_nodes", "expected {node: {cpus: [...], memory_mb: N}}"
        ) from None


def runs(bundle: Bundle) -> list[RunRecord]:
    """Validate a bundle into runs; raises IngestError naming the file and field of the first problem."""
    machine_name = need(bundle.machine, "machine", str, "machine.json")
    if problem := machine_name_problem(machine_name):
        raise IngestError("machine.json", "machine", problem)
    plain(bundle.machine, "machine.json")
    plain(bundle.benchmarks, "benchmarks.json")
    params = asv_results.benchmark_params(bundle.benchmarks)
    sidecar = sidecar_records.by_commit(bundle.sidecar)
    others = sorted(
        {
            str(r.get("asv_machine"))
            for r in bundle.sidecar
            if r.get("asv_machine", machine_name) != machine_name
        }
    )
    if others:  # records of another placement's asv machine: they would mix two placements' samples
        raise IngestError(
            "sidecar",
            "asv_machine",
            f"records of {', '.join(o[:64] for o in others[:3])} in the bundle of {machine_name!r}: each placement's "
            "records go with its own asv machine's results (gate.ingest.asv_dir reads them so)",
        )
    seen: dict[str, str] = {}
    out = []
    for result_file in bundle.results:
        file, data = result_file.path, result_file.data()
        commit, env_name, columns, date = _header(file, data, machine_name)
        records = sidecar.get(commit, [])
        results = _results(bundle, file, data, columns, params, records)
        if commit in seen:
            raise IngestError(
                file,
                "commit_hash",
                f"{commit[:12]} was also measured in {seen[commit]}: the sidecar cannot tell two asv environments' "
                "paired records apart; keep one environment per commit and machine",
            )
        seen[commit] = file
        placement, fingerprint, software = sidecar_records.placement_of(records, file)
        provenance = sidecar_records.provenance_of(records, file)
        if not results and not provenance.get("problems"):  # a meter that could not measure says why instead
            raise IngestError(
                file, "results", "holds none of the gate's benchmarks (" + ", ".join(BENCHMARKS) + ")"
            )
        digest = hashlib.sha256(
            json.dumps([bundle.machine, data, records], sort_keys=True, default=str).encode()
        ).hexdigest()
        out.append(
            RunRecord(
                machine=machine_name,
                asv_machine=bundle.machine,
                fingerprint=fingerprint,
                fingerprint_hash=_fingerprint_hash(fingerprint, file),
                software=software,
                placement=placement,
                commit=commit,
                env_name=env_name,
                started_at=datetime.fromtimestamp(date / 1000, UTC),
                digest=digest,
                results=results,
                provenance=provenance,
            )
        )
    return out
