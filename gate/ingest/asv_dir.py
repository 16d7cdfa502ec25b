"""Read an asv results directory (and the fusegate sidecar beside it) into upload bundles, one per machine."""

from __future__ import annotations

import json
from pathlib import Path

from gate.ingest.bundle import BUNDLE_FORMAT, Bundle, IngestError


def _text(path: Path, root: Path) -> str:
    try:
        return path.read_text()
    except OSError as exc:
        raise IngestError(str(path.relative_to(root)), "(file)", f"cannot read: {exc.strerror}") from None


def _json(path: Path, root: Path):
    text = _text(path, root)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise IngestError(
            str(path.relative_to(root)), f"(line {exc.lineno})", f"not JSON: {exc.msg}"
        ) from None


def sidecar_records(directory: Path) -> list[dict]:
    records = []
    for path in sorted(directory.glob("*/*.jsonl")):
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if not line.strip():
                continue
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise IngestError(f"{path}:{number}", "(line)", f"not JSON: {exc.msg}") from None
    return records


def read(results: Path, *, sidecar: Path | None = None) -> list[Bundle]:
    """Bundles from ``results`` (asv's results_dir), one per asv machine, each with the sidecar records of its
    commits (``<results>/../fusegate`` by default); a record naming its asv machine (a placement of a machine
    measured at several) goes to that machine's bundle only."""
    if not results.is_dir():
        raise IngestError(
            str(results), "(directory)", "not a directory; pass asv's results_dir (e.g. .asv/results)"
        )
    benchmarks_path = results / "benchmarks.json"
    if not benchmarks_path.is_file():
        raise IngestError(
            str(benchmarks_path), "(file)", "missing; asv writes it on every run (asv run / continuous)"
        )
    benchmarks = _json(benchmarks_path, results)
    records = sidecar_records(sidecar or results.parent / "fusegate")
    bundles = []
    for machine_json in sorted(results.glob("*/machine.json")):
        files = [
            {"path": str(p.relative_to(results)), "text": _text(p, results)}
            for p in sorted(machine_json.parent.glob("*.json"))
            if p.name != "machine.json"
        ]
        if files:
            prefixes = {
                Path(f["path"]).name.split("-", 1)[0] for f in files
            }  # asv names files <commit8>-<env>
            name = machine_json.parent.name
            bundles.append(
                Bundle(
                    format=BUNDLE_FORMAT,
                    machine=_json(machine_json, results),
                    benchmarks=benchmarks,
                    results=files,
                    sidecar=[
                        r
                        for r in records
                        if str(r.get("commit", ""))[:8] in prefixes and r.get("asv_machine", name) == name
                    ],
                )
            )
    if not bundles:
        raise IngestError(str(results), "(directory)", "holds no <machine>/machine.json with result files")
    return bundles
