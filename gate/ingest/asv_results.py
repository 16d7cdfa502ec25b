"""asv's results files read into result records: parameters, values and samples of the gate's benchmarks."""

from __future__ import annotations

import ast
import itertools
import math

from gate.domain.benchmarks import BENCHMARKS, STATUS_ONLY
from gate.domain.uploads import ResultRecord
from gate.domain.vocabulary import Status
from gate.ingest.checks import MAX_CELL, IngestError, is_count, is_name, need

VERSION = 2  # asv's results format
MAX_PARAM = 200  # characters of one asv parameter value
MAX_GRID = 10_000  # parameter combinations of one benchmark, checked before the combinations are built


def benchmark_params(benchmarks: dict) -> dict[str, tuple[str, ...]]:
    """The parameter names of each gate benchmark in asv's benchmarks.json, checked against the gate's."""
    names = {}
    for name, expected in BENCHMARKS.items():
        if name not in benchmarks:
            continue
        got = tuple(need(benchmarks[name], "param_names", list, "benchmarks.json", f"{name}."))
        if got != expected:
            raise IngestError(
                "benchmarks.json", f"{name}.param_names", f"expected {list(expected)}, got {list(got)}"
            )
        if not is_name(benchmarks[name].get("unit", "seconds"), 32):
            raise IngestError(
                "benchmarks.json", f"{name}.unit", "must be a unit name of 1-32 printable characters"
            )
        names[name] = expected
    return names


def _param_values(values: list, file: str, where: str) -> list:
    if not isinstance(values, list) or not all(isinstance(v, str) and len(v) <= MAX_PARAM for v in values):
        raise IngestError(
            file, where, f"expected lists of parameter values of at most {MAX_PARAM} characters"
        )
    try:
        return [ast.literal_eval(v) for v in values]
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        raise IngestError(file, where, f"parameter values are not Python literals: {values!r:.120}") from None


def _per_process(samples: list[float], repeat) -> list[list[float]]:
    """asv's samples of a cell split back into one list per round (process), when asv took a fixed count each."""
    if isinstance(repeat, int) and repeat > 0 and len(samples) > repeat and len(samples) % repeat == 0:
        return [samples[i : i + repeat] for i in range(0, len(samples), repeat)]
    return [samples]


def results(
    name: str, row: dict, param_names: tuple[str, ...], file: str, unit: str, repeat=None
) -> list[ResultRecord]:
    """The result of every parameter combination of benchmark ``name`` in one results file's ``row``."""
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
            if not is_name(p[key]):
                raise IngestError(
                    file,
                    f"{where}params",
                    f"{key} must be a name of 1-64 printable characters, got {p[key]!r:.80}",
                )
        for key in ("num_envs", "threads"):
            if key in p and not is_count(p[key]):
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
                status=Status.FAILED if value is None else Status.OK,
                unit=unit,
                value=None if value is None else float(value),
                samples=_per_process(sample, repeat) if sample else [],
            )
        )
    return out
