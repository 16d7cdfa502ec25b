"""The upload bundle: one machine's asv results and fusegate sidecar records, validated into runs.

The same bundle is what ``fusegate ingest DIR`` reads from disk and what ``POST /api/runs`` receives, so both
paths validate identically. Every problem is reported with the file and the field it is in; a bundle with any
problem is rejected whole, before anything is stored.
"""

from __future__ import annotations

import ast
import hashlib
import itertools
import json
import math
import re
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any, Literal

import pydantic_core
from pydantic import BaseModel, Field, ValidationError

from gate import sidecar
from gate.domain import (
    BENCHMARKS,
    COLLECTOR_COST,
    COLLECTOR_PHASES,
    COLLECTOR_STEP,
    COST,
    COST_BENCHMARKS,
    COST_UNITS,
    SIDECAR_PAIRED,
    STATUS_ONLY,
    ResultRecord,
    RunRecord,
    machine_id,
    machine_name_problem,
    suite_of,
)

BUNDLE_FORMAT = 1
ASV_RESULTS_VERSION = 2
SHA = re.compile(r"^[0-9a-f]{40}$")


class IngestError(ValueError):
    """A bundle that cannot be stored: which file, which field, what is wrong, what to do."""

    def __init__(self, file: str, field_: str, message: str):
        self.file, self.field, self.message = file, field_, message
        super().__init__(f"{file}: {field_}: {message}")


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


MAX_PARAM = 200  # characters of one asv parameter value
MAX_GRID = 10_000  # parameter combinations of one benchmark, checked before the combinations are built


_NUL = re.compile(
    r"(?<!\\)(?:\\\\)*\\u0000"
)  # an escaped NUL in JSON text (not an escaped backslash and u0000)


def plain(value: Any, file: str, *, where: str = "") -> None:
    """Refuse what the store cannot hold in a parsed JSON value it keeps as JSON (machine.json, the sidecar's
    machine, software and placement, a failure's message): NaN or Infinity, a NUL, an unpaired surrogate. The
    check is one C-speed ``json.dumps`` (a Python walk of every record cost 0.1 s per upload)."""
    try:
        text = json.dumps(value, allow_nan=False, ensure_ascii=False)
        text.encode("utf-8")
    except ValueError:  # UnicodeEncodeError is one
        raise IngestError(
            file,
            where or "(value)",
            "holds NaN or Infinity (JSON has no such number) or an unpaired surrogate",
        ) from None
    if _NUL.search(text):
        raise IngestError(
            file, where or "(value)", "holds a NUL character (\\u0000): the store cannot keep it"
        )


def _name(text: object, longest: int = 64) -> bool:
    """A name the store keeps as text: 1-``longest`` printable characters (no NUL, no control character, no
    unpaired surrogate)."""
    return isinstance(text, str) and 0 < len(text) <= longest and text.isprintable()


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


def _need(mapping: dict, key: str, kind: type | tuple[type, ...], file: str, where: str = "") -> Any:
    name = f"{where}{key}"
    if not isinstance(mapping, dict) or key not in mapping:
        raise IngestError(file, name, "missing")
    value = mapping[key]
    if not isinstance(value, kind):
        expected = " or ".join(t.__name__ for t in (kind if isinstance(kind, tuple) else (kind,)))
        raise IngestError(file, name, f"expected {expected}, got {type(value).__name__} {value!r:.80}")
    return value


def _param_values(values: list, file: str, where: str) -> list:
    if not isinstance(values, list) or not all(isinstance(v, str) and len(v) <= MAX_PARAM for v in values):
        raise IngestError(
            file, where, f"expected lists of parameter values of at most {MAX_PARAM} characters"
        )
    try:
        return [ast.literal_eval(v) for v in values]
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        raise IngestError(file, where, f"parameter values are not Python literals: {values!r:.120}") from None


def _provenance_of(records: list[dict], file: str) -> dict:
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
    problems = value.get("problems", [])
    if not (isinstance(problems, list) and len(problems) <= 20 and all(isinstance(x, str) for x in problems)):
        raise IngestError(file, f"{where}.problems", "expected at most 20 messages")
    for i, text in enumerate(problems):
        if len(text) > sidecar.MAX_MESSAGE:
            raise IngestError(file, f"{where}.problems[{i}]", f"longer than {sidecar.MAX_MESSAGE} characters")
    plain(value, file, where=where)
    return {k: value[k] for k in ("subject", "meter", "meter_commit", "problems", "against") if k in value}


def _placement_of(records: list[dict], file: str) -> tuple[dict, dict, dict]:
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
            "must not mix: run each placement under its own asv machine name (asv run --machine NAME-PLACEMENT)",
        )
    first = records[0]
    return first["placement"], first["machine"], first["software"]


def _sidecar_records(bundle: Bundle) -> dict[str, list[dict]]:
    """Sidecar records by commit (asv's matrix here is one environment per commit and machine)."""
    by_commit: dict[str, list[dict]] = {}
    for number, record in enumerate(bundle.sidecar):
        where = f"sidecar[{number}]"
        if record.get("format") != sidecar.FORMAT:
            raise IngestError(
                where, "format", f"expected sidecar format {sidecar.FORMAT}, got {record.get('format')!r}"
            )
        commit = _need(record, "commit", str, where)
        _need(record, "env", str, where)
        placement = _need(record, "placement", dict, where)
        _need(placement, "granted", dict, where, "placement.")
        for key in ("machine", "software"):  # stored with the run as JSON, like placement
            plain(_need(record, key, dict, where), where, where=f"{key}.")
        plain(placement, where, where="placement.")
        kind = _need(record, "kind", str, where)
        if kind in SIDECAR_PAIRED.values():
            _cell_fields(record, where)
            pairs = _need(record, "pairs", list, where)
            if not pairs:
                raise IngestError(where, "pairs", "empty: a paired record needs at least one pair")
            for i, pair in enumerate(pairs):
                for key in ("base_s", "impl_s"):
                    value = _need(pair, key, (int, float), where, f"pairs[{i}].")
                    if not value > 0 or not math.isfinite(value):
                        raise IngestError(
                            where, f"pairs[{i}].{key}", f"a time must be positive and finite, got {value}"
                        )
                if not 0 < pair["impl_s"] / pair["base_s"] < math.inf:
                    raise IngestError(where, f"pairs[{i}]", "impl_s / base_s is not a finite positive ratio")
                if kind == "collector_paired":
                    if not _name(_need(record, "baseline", str, where)):
                        raise IngestError(where, "baseline", "must be a name of 1-64 printable characters")
                    for side in ("base_us", "impl_us"):
                        phases = _need(pair, side, dict, where, f"pairs[{i}].")
                        for phase in COLLECTOR_PHASES:
                            value = _need(phases, phase, (int, float), where, f"pairs[{i}].{side}.")
                            if not value >= 0 or not math.isfinite(value):
                                raise IngestError(
                                    where,
                                    f"pairs[{i}].{side}.{phase}",
                                    f"must be >= 0 and finite, got {value}",
                                )
        elif kind == sidecar.FAILURE:
            _cell_fields(record, where)
            if record.get("suite", "hot_slice") not in sidecar.SUITES:
                raise IngestError(
                    where,
                    "suite",
                    f"expected one of {', '.join(sidecar.SUITES)}, got {record['suite']!r:.40}",
                )
            message = _need(record, "message", str, where)
            if len(message) > sidecar.MAX_MESSAGE:
                raise IngestError(where, "message", f"longer than {sidecar.MAX_MESSAGE} characters")
            plain(message, where, where="message")
        by_commit.setdefault(commit, []).append(record)
    return by_commit


MAX_CELL = 2**31 - 1  # num_envs and threads: the store's cell columns are 32-bit


def _count(value: object) -> bool:
    """A cell's num_envs or threads: a positive integer the store can hold."""
    return isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= MAX_CELL


def _cell_fields(record: dict, where: str) -> None:
    for key in ("task", "impl"):
        if not _name(_need(record, key, str, where)):
            raise IngestError(where, key, "must be a name of 1-64 printable characters")
    for key in ("num_envs", "threads"):
        if not _count(_need(record, key, int, where)):
            raise IngestError(where, key, f"must be an integer in 1..{MAX_CELL}, got {record[key]!r:.40}")


def _failures(records: list[dict]) -> dict[tuple, str]:
    """(suite, task, impl, num_envs, threads) -> the exception a benchmark process of that cell raised; the
    suite (``suite_of``) keeps a timing failure from explaining a cost cell or back."""
    return {
        (r.get("suite", "hot_slice"), r["task"], r["impl"], r["num_envs"], r["threads"]): r["message"]
        for r in records
        if r["kind"] == "failure"
    }


def _benchmark_params(bundle: Bundle) -> dict[str, tuple[str, ...]]:
    names = {}
    for name, expected in BENCHMARKS.items():
        if name not in bundle.benchmarks:
            continue
        got = tuple(_need(bundle.benchmarks[name], "param_names", list, "benchmarks.json", f"{name}."))
        if got != expected:
            raise IngestError(
                "benchmarks.json", f"{name}.param_names", f"expected {list(expected)}, got {list(got)}"
            )
        meta = bundle.benchmarks[name]
        if not _name(meta.get("unit", "seconds"), 32):
            raise IngestError(
                "benchmarks.json", f"{name}.unit", "must be a unit name of 1-32 printable characters"
            )
        names[name] = expected
    return names


def _per_process(samples: list[float], repeat) -> list[list[float]]:
    """asv's samples of a cell split back into one list per round (process), when asv took a fixed count each."""
    if isinstance(repeat, int) and repeat > 0 and len(samples) > repeat and len(samples) % repeat == 0:
        return [samples[i : i + repeat] for i in range(0, len(samples), repeat)]
    return [samples]


def _results(
    name: str, row: dict, param_names: tuple[str, ...], file: str, unit: str, repeat=None
) -> list[ResultRecord]:
    where = f"results.{name}."
    params = row.get("params")
    if not isinstance(params, list) or len(params) != len(param_names):
        raise IngestError(
            file, f"{where}params", f"expected {len(param_names)} parameter lists ({', '.join(param_names)})"
        )
    size = math.prod(len(values) if isinstance(values, list) else 0 for values in params)
    if size > MAX_GRID:
        raise IngestError(file, f"{where}params", f"{size} parameter combinations, over {MAX_GRID}")
    grids = [_param_values(values, file, f"{where}params") for values in params]
    combos = list(itertools.product(*grids))
    values = row.get("result")
    if values is None:  # asv compresses "every combination failed" to null
        values = [None] * len(combos)
    if not isinstance(values, list) or len(values) != len(combos):
        raise IngestError(
            file, f"{where}result", f"expected {len(combos)} values, one per parameter combination"
        )
    samples = row.get("samples") or [None] * len(combos)
    if name in STATUS_ONLY and isinstance(samples, list):
        samples = [None] * len(samples)
    if not isinstance(samples, list) or len(samples) != len(combos):
        raise IngestError(file, f"{where}samples", f"expected {len(combos)} sample lists")
    out = []
    for combo, value, sample in zip(combos, values, samples, strict=True):
        if isinstance(value, float) and math.isnan(value):
            continue  # asv's NaN: skipped (NotImplementedError), the combination does not exist
        if value is not None and (not isinstance(value, (int, float)) or not math.isfinite(value)):
            raise IngestError(file, f"{where}result", f"not a finite number: {value!r:.80}")
        if sample is not None and (
            not isinstance(sample, list)
            or not all(isinstance(s, (int, float)) and 0 < s < math.inf for s in sample)
        ):
            raise IngestError(file, f"{where}samples", f"samples of {combo} must be positive numbers")
        p = dict(zip(param_names, combo, strict=True))
        for key in ("task", "impl"):
            if not _name(p[key]):
                raise IngestError(
                    file,
                    f"{where}params",
                    f"{key} must be a name of 1-64 printable characters, got {p[key]!r:.80}",
                )
        for key in ("num_envs", "threads"):
            if key in p and not _count(p[key]):
                raise IngestError(
                    file, f"{where}params", f"{key} must be an integer in 1..{MAX_CELL}, got {p[key]!r:.40}"
                )
        out.append(
            ResultRecord(
                benchmark=name,
                task=str(p["task"]),
                impl=str(p["impl"]),
                num_envs=p.get("num_envs"),
                threads=p.get("threads"),
                status="failed" if value is None else "ok",
                unit=unit,
                value=None if value is None else float(value),
                samples=_per_process(sample, repeat) if sample else [],
            )
        )
    return out


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
            status="ok",
            unit=unit,
            value=float(sorted(x for g in groups for x in g)[sum(len(g) for g in groups) // 2]),
            samples=groups,
        )
        for (task, impl, n, t), groups in cells.items()
    ]


def _paired_results(records: list[dict]) -> list[ResultRecord]:
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


def _cost_results(records: list[dict]) -> list[ResultRecord] | None:
    """Every metric of every cell of the commit's newest cost pass (the sidecar's ``cost`` record), or None
    when the sidecar has none (results from before the record, or a pass that raised: asv's tracks then say
    which cells failed). asv tracks only the policy's default metric in the quick profile; the record has all."""
    passes = [r for r in records if r["kind"] == "cost"]
    if not passes:
        return None
    cells = _need(_need(passes[-1], "cost", dict, "sidecar cost"), "cells", list, "sidecar cost", "cost.")
    out = []
    for number, cell in enumerate(cells):
        where = f"sidecar cost.cells[{number}]"
        if not isinstance(cell, dict):
            raise IngestError(where, "(cell)", "expected an object per measured cell")
        _cell_fields({**cell, "threads": 1}, where)
        if cell.get("error"):
            plain(str(cell["error"]), where, where="error")
        names = COST if cell.get("kind", "update_state") == "update_state" else COLLECTOR_COST
        for metric, name in names.items():
            value = cell.get(metric)
            if value is None and not cell.get("error") and metric != "instructions":
                continue  # counted without the cache simulation: instructions only
            calls = cell.get("calls")
            saw_none = isinstance(calls, int) and not isinstance(calls, bool) and calls < 1
            ok = (
                not cell.get("error")
                and not saw_none
                and isinstance(value, (int, float))
                and math.isfinite(value)
                and value > 0
            )
            out.append(
                ResultRecord(
                    benchmark=name,
                    task=cell["task"],
                    impl=cell["impl"],
                    num_envs=cell["num_envs"],
                    threads=1,
                    status="ok" if ok else "failed",
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


def _collector_results(records: list[dict]) -> list[ResultRecord]:
    """The collector's step time and phases per implementation, from its paired records (``COLLECTOR_STEP``)."""
    step: dict[tuple, list[list[float]]] = {}
    phases: dict[str, dict[tuple, list[list[float]]]] = {phase: {} for phase in COLLECTOR_PHASES}
    for r in records:
        if r["kind"] != "collector_paired":
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


def runs(bundle: Bundle) -> list[RunRecord]:
    """Validate a bundle into runs; raises IngestError naming the file and field of the first problem."""
    machine_name = _need(bundle.machine, "machine", str, "machine.json")
    if problem := machine_name_problem(machine_name):
        raise IngestError("machine.json", "machine", problem)
    plain(bundle.machine, "machine.json")
    plain(bundle.benchmarks, "benchmarks.json")
    params = _benchmark_params(bundle)
    sidecar = _sidecar_records(bundle)
    seen: dict[str, str] = {}
    out = []
    for result_file in bundle.results:
        file, data = result_file.path, result_file.data()
        version = data.get("version")
        if version != ASV_RESULTS_VERSION:
            raise IngestError(
                file, "version", f"expected asv results version {ASV_RESULTS_VERSION}, got {version!r}"
            )
        commit = _need(data, "commit_hash", str, file)
        if not SHA.match(commit):
            raise IngestError(file, "commit_hash", f"expected a full 40-digit hex SHA, got {commit!r}")
        env_name = _need(data, "env_name", str, file)
        if _need(data, "params", dict, file).get("machine", machine_name) != machine_name:
            raise IngestError(
                file,
                "params.machine",
                f"{data['params']['machine']!r} is not this bundle's machine {machine_name!r}",
            )
        columns = _need(data, "result_columns", list, file)
        if not all(isinstance(c, str) for c in columns):
            raise IngestError(file, "result_columns", "expected a list of column names")
        date = _need(data, "date", (int, float), file)
        if not 0 < date < 4e12:  # asv writes milliseconds since the epoch
            raise IngestError(file, "date", f"not a time in milliseconds since 1970: {date!r}")
        if not _name(env_name, 200):
            raise IngestError(file, "env_name", "must be a name of 1-200 printable characters")
        results: list[ResultRecord] = []
        commit_records = sidecar.get(commit, [])
        cost_results = _cost_results(commit_records)
        for name, raw in _need(data, "results", dict, file).items():
            if name not in params:
                continue
            if not isinstance(raw, list):
                raise IngestError(file, f"results.{name}", "expected a list of columns")
            if name in SIDECAR_PAIRED or (name in COST_BENCHMARKS and cost_results is not None):
                continue  # from the sidecar: the paired samples one list per process, the cost pass whole
            row = dict(zip(columns, raw, strict=False))
            meta = bundle.benchmarks[name]
            results.extend(
                _results(name, row, params[name], file, meta.get("unit", "seconds"), meta.get("repeat"))
            )
        if commit in seen:
            raise IngestError(
                file,
                "commit_hash",
                f"{commit[:12]} was also measured in {seen[commit]}: the sidecar cannot tell two asv environments' "
                "paired records apart; keep one environment per commit and machine",
            )
        seen[commit] = file
        records = commit_records
        placement, fingerprint, software = _placement_of(records, file)
        results.extend(cost_results or [])
        results.extend(_paired_results(records))
        results.extend(_collector_results(records))
        # A paired benchmark asv recorded as failed (parity or construction) has no sidecar record: keep the failure.
        for name in SIDECAR_PAIRED:
            if name in params and name in data["results"]:
                row = dict(zip(columns, data["results"][name], strict=False))
                results.extend(
                    r for r in _results(name, row, params[name], file, "ratio") if r.status == "failed"
                )
        provenance = _provenance_of(records, file)
        if not results and not provenance.get("problems"):  # a meter that could not measure says why instead
            raise IngestError(
                file, "results", "holds none of the gate's benchmarks (" + ", ".join(BENCHMARKS) + ")"
            )
        failures = _failures(records)
        results = [
            replace(
                r,
                message=r.message
                or failures.get((suite_of(r.benchmark), r.task, r.impl, r.num_envs, r.threads), ""),
            )
            if r.status == "failed"
            else r
            for r in results
        ]
        digest = hashlib.sha256(
            json.dumps([bundle.machine, data, records], sort_keys=True, default=str).encode()
        ).hexdigest()
        try:
            fingerprint_hash = machine_id(fingerprint)
        except KeyError as exc:
            raise IngestError(
                file, f"sidecar.machine.{exc.args[0]}", "missing from the machine fingerprint"
            ) from None
        except (AttributeError, TypeError):
            raise IngestError(
                file, "sidecar.machine.numa_nodes", "expected {node: {cpus: [...], memory_mb: N}}"
            ) from None
        out.append(
            RunRecord(
                machine=machine_name,
                asv_machine=bundle.machine,
                fingerprint=fingerprint,
                fingerprint_hash=fingerprint_hash,
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
