"""Where the time of an asv run went, per benchmark class: the end of ``fusegate run --profile-time`` (and
``python -m tools profile-time``).

Two sources, both already on disk after ``asv run`` / ``asv continuous``:

- asv's result file of the commit: each benchmark's wall time over all its parameter combinations and rounds
  (``duration``), each ``setup_cache``'s (one process, e.g. the cost pass) and the build's;
- the per-process records next to the sidecar (``.asv/fusegate/<commit>/processes/``, written by
  ``benchmarks/_common.flush_process``): for every benchmark process, its start-up (interpreter and asv, before
  fusegate's code ran; 0 when forked from asv's forkserver), imports (NumPy, Numba, the kernels; 0 likewise),
  each timed setup phase (snapshot, parity, load: the kernel's first call, i.e. Numba's cache load or compile)
  and its age at its last teardown. What is left of a process is measuring; what is left of asv's wall time
  beyond its processes' lives is asv's own (spawning, discovery, writing results).
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

PHASES = ("snapshot", "parity", "load")


@dataclass
class Row:
    """One benchmark class (or one ``setup_cache``, or the build): wall seconds and, where known, its parts."""

    name: str
    wall_s: float
    processes: int = 0
    parts: dict[str, float] = field(default_factory=dict)  # startup, import, PHASES, measuring, asv

    def to_dict(self) -> dict:
        return {"name": self.name, "wall_s": self.wall_s, "processes": self.processes, "parts": self.parts}


def _result_files(results: Path, commit: str) -> list[Path]:
    return sorted(p for p in results.glob(f"*/{commit[:8]}-*.json") if p.is_file())


def _records(sidecar: Path, commit: str) -> list[dict]:
    out = []
    for path in sorted((sidecar / commit[:8] / "processes").glob("*.json")):
        try:
            out.append(json.loads(path.read_text()))
        except (OSError, ValueError):
            continue  # torn by a killed process: the rest still adds up
    return out


def _class_of(benchmark: str) -> str:
    return ".".join(benchmark.split(".")[:2])  # module.Class of module.Class.method


def profile(
    results: Path, sidecar: Path, commit: str, *, since: float | None = None, total_s: float | None = None
) -> list[Row]:
    """Rows for ``commit``: every benchmark class asv ran, every ``setup_cache``, the build.

    ``since`` (epoch seconds) keeps only process records written after it, for one run's profile when the
    commit's sidecar also holds earlier runs. ``total_s``, the wall time of the asv calls, adds a row for what
    asv did outside any benchmark (discovery, environments, between benchmarks).
    """
    benchmarks_json = results / "benchmarks.json"
    known = json.loads(benchmarks_json.read_text()) if benchmarks_json.is_file() else {}
    cache_users = defaultdict(set)
    for name, info in known.items():
        if isinstance(info, dict) and info.get("setup_cache_key"):
            cache_users[info["setup_cache_key"]].add(_class_of(name))
    wall = defaultdict(float)
    for path in _result_files(results, commit):
        data = json.loads(path.read_text())
        columns = data.get("result_columns", [])
        for name, values in data.get("results", {}).items():
            row = dict(zip(columns, values, strict=False))
            wall[_class_of(name)] += float(row.get("duration") or 0.0)
        for key, seconds in data.get("durations", {}).items():
            if key == "<build>":
                wall["(build and install)"] += float(seconds)
            elif key.startswith("<setup_cache "):
                cache = key[len("<setup_cache ") : -1]
                users = ", ".join(sorted(cache_users.get(cache, ()))) or cache
                wall[f"setup_cache of {users}"] += float(seconds)
    parts: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    processes = defaultdict(int)
    for r in _records(sidecar, commit):
        if since is not None and r.get("time", 0) < since:
            continue
        name = next((c for c in wall if c.endswith(f".{r['benchmark']}")), r["benchmark"])
        processes[name] += 1
        p = parts[name]
        p["startup"] += r["startup_s"]
        p["import"] += r["import_s"]
        phases = r.get("phases", {})
        for phase in PHASES:
            p[phase] += phases.get(phase, 0.0)
        p["measuring"] += r["age_s"] - r["startup_s"] - r["import_s"] - sum(phases.values())
        p["_lives"] += r["age_s"]
    rows = []
    for name in sorted(wall, key=lambda n: -wall[n]):
        p = dict(parts.get(name, {}))
        lives = p.pop("_lives", None)
        if lives is not None:
            p["asv"] = max(wall[name] - lives, 0.0)
        rows.append(Row(name=name, wall_s=wall[name], processes=processes.get(name, 0), parts=p))
    if total_s is not None:
        rows.append(Row(name="(asv outside benchmarks)", wall_s=max(total_s - sum(wall.values()), 0.0)))
    return rows
