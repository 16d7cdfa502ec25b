"""fusegate's sidecar records read into result records: one pydantic model per record kind validates them, and
the paired, collector and cost records become the results asv cannot hold (one sample list per process).

A record is checked whole at the boundary (``by_commit``); what the store keeps as JSON (machine, software,
placement, a failure's message) is checked by ``plain`` as well. The records stay the dicts the meter wrote,
so an upload's digest is the same whichever version of the gate reads it.
"""

from __future__ import annotations

import json
import math
import re
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, ValidationError, create_model, model_validator

from gate import sidecar
from gate.domain.benchmarks import (
    COLLECTOR_COST,
    COLLECTOR_PHASES,
    COLLECTOR_STEP,
    COST,
    COST_UNITS,
    SIDECAR_PAIRED,
)
from gate.domain.uploads import ResultRecord
from gate.domain.vocabulary import Status
from gate.ingest.checks import MAX_CELL, SHA, IngestError, is_count, is_name, plain


def _checked(test, says) -> Any:
    """A field any JSON value may fill, checked by ``test``; ``says(value)`` is what the uploader reads."""

    def check(value: Any) -> Any:
        if not test(value):
            raise ValueError(says(value))
        return value

    return Annotated[Any, AfterValidator(check)]


def _number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


Name = _checked(is_name, lambda v: "must be a name of 1-64 printable characters")
Count = _checked(is_count, lambda v: f"must be an integer in 1..{MAX_CELL}, got {v!r:.40}")
Seconds = _checked(
    lambda v: _number(v) and v > 0, lambda v: f"a time must be positive and finite, got {v!r:.40}"
)
Micros = _checked(lambda v: _number(v) and v >= 0, lambda v: f"must be >= 0 and finite, got {v!r:.40}")
Message = _checked(
    lambda v: isinstance(v, str) and len(v) <= sidecar.MAX_MESSAGE,
    lambda v: f"expected text of at most {sidecar.MAX_MESSAGE} characters",
)
_OPEN = ConfigDict(extra="allow", strict=True)  # a record may carry more than the gate reads


class Placement(BaseModel):
    model_config = _OPEN
    granted: dict[str, Any]


class Record(BaseModel):
    """What every record carries, whatever its kind."""

    model_config = _OPEN
    format: Literal[1]
    commit: str
    env: str
    kind: str
    placement: Placement
    machine: dict[str, Any]
    software: dict[str, Any]


class CellRecord(Record):
    task: Name
    impl: Name
    num_envs: Count
    threads: Count


class Pair(BaseModel):
    model_config = _OPEN
    base_s: Seconds
    impl_s: Seconds

    @model_validator(mode="after")
    def _finite_ratio(self) -> Pair:
        if not 0 < self.impl_s / self.base_s < math.inf:
            raise ValueError("impl_s / base_s is not a finite positive ratio")
        return self


class PairedRecord(CellRecord):
    """In-process pairs of an implementation and what it is timed against (``SIDECAR_PAIRED``): the baseline
    implementation, or ``base`` for the head timed against the base in lockstep."""

    pairs: list[Pair]
    baseline: Name | None = None  # absent in records of meters that did not say

    @model_validator(mode="after")
    def _some_pairs(self) -> PairedRecord:
        if not self.pairs:
            raise ValueError("pairs: empty: a paired record needs at least one pair")
        return self


Phases = create_model("Phases", __config__=_OPEN, **{phase: (Micros, ...) for phase in COLLECTOR_PHASES})


class CollectorPair(Pair):
    base_us: Phases  # type: ignore[valid-type]
    impl_us: Phases  # type: ignore[valid-type]


class CollectorPairedRecord(PairedRecord):
    """Collector steps of an implementation and the baseline, each side's phases with them."""

    baseline: Name
    pairs: list[CollectorPair]


class FailureRecord(CellRecord):
    """A benchmark that raised: its cell, the suite it ran in and the exception's text."""

    suite: Literal[sidecar.SUITES] = "hot_slice"  # type: ignore[valid-type]
    message: Message


class CostCell(BaseModel):
    model_config = _OPEN
    task: Name
    impl: Name
    num_envs: Count


class CostPass(BaseModel):
    model_config = _OPEN
    cells: list[CostCell]


class CostRecord(Record):
    """One cost pass: every cell's per-call instructions (and simulated misses) under callgrind."""

    cost: CostPass


MODELS: dict[str, type[Record]] = {
    **dict.fromkeys(SIDECAR_PAIRED.values(), PairedRecord),
    sidecar.COLLECTOR_PAIRED: CollectorPairedRecord,
    sidecar.FAILURE: FailureRecord,
    sidecar.COST: CostRecord,
}


def _field(loc: tuple) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else f".{part}" if out else str(part)
    return out or "(record)"


def check(record: Any, where: str) -> None:
    """Validate one record by the model of its kind, or IngestError naming the record and the field."""
    if not isinstance(record, dict) or record.get("format") != sidecar.FORMAT:
        got = record.get("format") if isinstance(record, dict) else type(record).__name__
        raise IngestError(where, "format", f"expected sidecar format {sidecar.FORMAT}, got {got!r:.40}")
    kind = record.get("kind")
    model = MODELS.get(kind, Record) if isinstance(kind, str) else Record  # Record says what kind must be
    try:
        model.model_validate(record)
    except ValidationError as exc:
        first = exc.errors()[0]
        field, message = _field(first["loc"]), first["msg"]
        if first["type"] == "value_error":
            message = str(first["ctx"]["error"])
            if message.startswith("pairs: "):  # a rule of the record about one field of it
                field, message = "pairs", message.removeprefix("pairs: ")
        elif first["type"] == "missing":
            message = "missing"
        elif "input" in first:  # the value that was refused, as the uploader wrote it
            value = first["input"]
            message = f"{message}, got {type(value).__name__} {value!r:.80}"
        raise IngestError(where, field, message) from None
    for key in ("machine", "software", "placement"):  # stored with the run as JSON
        plain(record[key], where, where=f"{key}.")
    if record["kind"] == sidecar.FAILURE:
        plain(record["message"], where, where="message")


def by_commit(records: list[dict]) -> dict[str, list[dict]]:
    """Every record checked, grouped by the commit it measured (asv's matrix here is one environment per commit
    and machine)."""
    out: dict[str, list[dict]] = {}
    for number, record in enumerate(records):
        check(record, f"sidecar[{number}]")
        out.setdefault(record["commit"], []).append(record)
    return out


def provenance_of(records: list[dict], file: str) -> dict:
    """What the run measured and with what (``gate.provenance``), the same in every record of it; {} when its
    records predate it."""
    found = {json.dumps(r.get("provenance") or {}, sort_keys=True) for r in records}
    if len(found) > 1:
        raise IngestError(
            file,
            "sidecar.provenance",
            f"{len(found)} different subjects or meters in one commit's records: measure a commit in one tree "
            "(fusegate measure), and keep another tree's results apart",
        )
    value = records[0].get("provenance") or {}
    where = "sidecar.provenance"
    if not isinstance(value, dict):
        raise IngestError(file, where, f"expected an object, got {type(value).__name__}")
    for key in ("subject", "meter"):
        if key in value and not (isinstance(value[key], str) and re.fullmatch(r"[0-9a-f]{8,64}", value[key])):
            raise IngestError(file, f"{where}.{key}", "expected a content id of 8-64 hex digits")
    for key in ("meter_commit", "against"):
        commit = value.get(key)
        if commit is not None and not (isinstance(commit, str) and SHA.match(commit)):
            raise IngestError(file, f"{where}.{key}", "expected a full 40-digit hex SHA or null")
    kernels = value.get("kernels", {})
    if not (isinstance(kernels, dict) and len(kernels) <= 64):
        raise IngestError(file, f"{where}.kernels", "expected an object of at most 64 kernels")
    for name, id_ in kernels.items():
        if not re.fullmatch(r"[A-Za-z0-9_.-]{1,64}/[A-Za-z0-9_.-]{1,64}", name):
            raise IngestError(file, f"{where}.kernels", f"{name[:80]!r} is not task/implementation")
        if not (isinstance(id_, str) and re.fullmatch(r"[0-9a-f]{8,64}", id_)):
            raise IngestError(file, f"{where}.kernels.{name}", "expected a content id of 8-64 hex digits")
    problems = value.get("problems", [])
    if not (isinstance(problems, list) and len(problems) <= 20 and all(isinstance(x, str) for x in problems)):
        raise IngestError(file, f"{where}.problems", "expected at most 20 messages")
    for i, text in enumerate(problems):
        if len(text) > sidecar.MAX_MESSAGE:
            raise IngestError(file, f"{where}.problems[{i}]", f"longer than {sidecar.MAX_MESSAGE} characters")
    plain(value, file, where=where)
    keys = ("subject", "meter", "meter_commit", "problems", "against", "kernels")
    out = {k: value[k] for k in keys if k in value}
    if baseline := _baseline_of(records, file):
        out["baseline"] = baseline
    return out


def _baseline_of(records: list[dict], file: str) -> str | None:
    """The implementation the run's implementation-vs-baseline pairs were timed against (None: not recorded)."""
    kinds = (sidecar.PAIRED, sidecar.COLLECTOR_PAIRED)
    found = sorted({r["baseline"] for r in records if r["kind"] in kinds and r.get("baseline")})
    if len(found) > 1:
        raise IngestError(
            file,
            "sidecar.baseline",
            f"one commit's pairs were timed against {', '.join(found)}: a run pairs against one baseline",
        )
    return found[0] if found else None


def placement_of(records: list[dict], file: str) -> tuple[dict, dict, dict]:
    """(placement, machine fingerprint, software) shared by every sidecar record of a run."""
    if not records:
        raise IngestError(
            file,
            "sidecar",
            "no fusegate sidecar record for this commit; placement and fingerprints are "
            "required with every result (run the suites from this repository so benchmarks/_common.py writes "
            ".asv/fusegate/<commit>/*.jsonl, and include that directory)",
        )
    placements = {json.dumps(r["placement"], sort_keys=True) for r in records}
    if len(placements) > 1:
        raise IngestError(
            file,
            "sidecar.placement",
            f"{len(placements)} different placements for one commit; results of different placements "
            "must not mix: run each placement under its own asv machine name (asv run --machine NAME__PLACEMENT)",
        )
    first = records[0]
    return first["placement"], first["machine"], first["software"]


def failures(records: list[dict]) -> dict[tuple, str]:
    """(suite, task, impl, num_envs, threads) -> the exception a benchmark process of that cell raised; the
    suite (``suite_of``) keeps a timing failure from explaining a cost cell or back."""
    return {
        (r.get("suite", "hot_slice"), r["task"], r["impl"], r["num_envs"], r["threads"]): r["message"]
        for r in records
        if r["kind"] == sidecar.FAILURE
    }


def pair_ratios(record: dict) -> list[float]:
    """impl / baseline time of every pair of a sidecar ``paired`` record."""
    return [p["impl_s"] / p["base_s"] for p in record["pairs"]]


def _sampled(benchmark: str, unit: str, cells: dict[tuple, list[list[float]]]) -> list[ResultRecord]:
    """One result per (task, impl, num_envs, threads) cell, one sample list per benchmark process; its value
    is the median of every sample."""
    return [
        ResultRecord(
            benchmark=benchmark,
            task=task,
            impl=impl,
            num_envs=n,
            threads=t,
            status=Status.OK,
            unit=unit,
            value=float(sorted(x for g in groups for x in g)[sum(len(g) for g in groups) // 2]),
            samples=groups,
        )
        for (task, impl, n, t), groups in cells.items()
    ]


def paired_results(records: list[dict]) -> list[ResultRecord]:
    """One paired result per cell and paired benchmark, one sample list (pair ratios) per benchmark process."""
    out = []
    for benchmark, kind in SIDECAR_PAIRED.items():
        cells: dict[tuple, list[list[float]]] = {}
        for r in records:
            if r["kind"] == kind:
                cells.setdefault((r["task"], r["impl"], r["num_envs"], r["threads"]), []).append(
                    pair_ratios(r)
                )
        out += _sampled(benchmark, "ratio", cells)
    return out


def _cost_cell_results(cell: dict, where: str) -> list[ResultRecord]:
    if cell.get("error"):
        plain(str(cell["error"]), where, where="error")
    out = []
    names = COST if cell.get("kind", "update_state") == "update_state" else COLLECTOR_COST
    for metric, name in names.items():
        value = cell.get(metric)
        if value is None and not cell.get("error") and metric != "instructions":
            continue  # counted without the cache simulation: instructions only
        calls = cell.get("calls")
        saw_none = isinstance(calls, int) and not isinstance(calls, bool) and calls < 1
        ok = not cell.get("error") and not saw_none and _number(value) and value > 0
        out.append(
            ResultRecord(
                benchmark=name,
                task=cell["task"],
                impl=cell["impl"],
                num_envs=cell["num_envs"],
                threads=1,
                status=Status.OK if ok else Status.FAILED,
                unit=COST_UNITS[metric],
                value=float(value) if ok else None,
                samples=[[float(value)]] if ok else [],
                message=""
                if ok
                else sidecar.message(
                    "under callgrind: the measurement saw no call of the kernel"
                    if saw_none and not cell.get("error")
                    else f"under callgrind: {cell.get('error') or f'no {metric}'}"
                ),
            )
        )
    return out


def cost_results(records: list[dict]) -> list[ResultRecord] | None:
    """Every metric of every cell of the commit's newest cost pass (the sidecar's ``cost`` record), or None
    when the sidecar has none (results from before the record, or a pass that raised: asv's tracks then say
    which cells failed). asv tracks only the policy's default metric in the quick profile; the record has all."""
    passes = [r for r in records if r["kind"] == sidecar.COST]
    if not passes:
        return None
    cells = passes[-1]["cost"]["cells"]
    return [
        result
        for number, cell in enumerate(cells)
        for result in _cost_cell_results(cell, f"sidecar cost.cells[{number}]")
    ]


def collector_results(records: list[dict]) -> list[ResultRecord]:
    """The collector's step time and phases per implementation, from its paired records (``COLLECTOR_STEP``)."""
    step: dict[tuple, list[list[float]]] = {}
    phases: dict[str, dict[tuple, list[list[float]]]] = {phase: {} for phase in COLLECTOR_PHASES}
    for r in records:
        if r["kind"] != sidecar.COLLECTOR_PAIRED:
            continue
        for impl, side in ((r["impl"], "impl"), (r["baseline"], "base")):
            key = (r["task"], impl, r["num_envs"], r["threads"])
            step.setdefault(key, []).append([p[f"{side}_s"] for p in r["pairs"]])
            for phase in COLLECTOR_PHASES:
                values = [p[f"{side}_us"][phase] for p in r["pairs"] if p[f"{side}_us"][phase] > 0]
                if values:  # log-scale summaries: a phase too short for the clock has no sample
                    phases[phase].setdefault(key, []).append(values)
    out = _sampled(COLLECTOR_STEP, "seconds", step)
    for phase, cells in phases.items():
        out += _sampled(COLLECTOR_PHASES[phase], "us", cells)
    return out
