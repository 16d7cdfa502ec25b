"""Which head-vs-base design survives the VM's slow phases: an A/A over an hour, three designs side by side.

    python -m tools.drift --base-tree B --head-tree H [--sessions 7] [--every 10] [--processes 3]
                               [--pairs 30] [--cells g1_motion/handwritten/4096/2,...] [--json]

B and H are two trees of the same kernels (e.g. a commit and the same commit with a comment added to a kernel,
so each side compiles its own). Session 0 times the base alone (as a stored base is: once); every session then,
for each cell and in each of ``--processes`` fresh worker pairs (``gate.meter.duet``):

- **stale**: the head alone, against session 0's base alone (the gate's head_vs_base before: raw times taken at
  different moments);
- **interleaved**: the base alone then the head alone, seconds apart in the same session (processes ABAB);
- **duet**: the two alternated sample by sample (``Duet.pairs``).

It prints each design's head/base ratio (median over processes of the per-process median) per session and cell,
and over all sessions its median, its range and how often it left [0.95, 1.05]: an A/A, so 1.0 is right.
Slow by design (an hour); run nothing else meanwhile. Kept out of the tests.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from gate.meter.duet import Cell, Duet

DEFAULT_CELLS = "g1_motion/handwritten/4096/2,g1_walk/handwritten/4096/2,g1_motion/assembled/4096/1,g1_walk/assembled/32768/2"


def _cell(text: str) -> Cell:
    task, impl, n, t = text.split("/")
    return Cell(task=task, impl=impl, num_envs=int(n), threads=int(t))


def session(head: Path, base: Path, cells: list[Cell], processes: int, pairs: int) -> dict:
    """One session: per cell and process, the base alone, the head alone and the duet's pairs."""
    out = {c.label(): {"base": [], "head": [], "duet": []} for c in cells}
    for _ in range(processes):
        with Duet(head, base) as duet:
            for c in cells:
                row = out[c.label()]
                row["base"].append(statistics.median(duet.alone("base", c, pairs)))
                row["head"].append(statistics.median(duet.alone("head", c, pairs)))
                got = duet.pairs(c, pairs)
                row["duet"].append(statistics.median(p.head_s / p.base_s for p in got))
    return out


def ratios(first: dict, now: dict) -> dict[str, dict[str, float]]:
    """Each design's head/base ratio per cell: stale (now's head over the first session's base), interleaved, duet."""
    med = statistics.median
    return {
        cell: {
            "stale": med(r["head"]) / med(first[cell]["base"]),
            "interleaved": med(r["head"]) / med(r["base"]),
            "duet": med(r["duet"]),
            "base_ms": 1e3 * med(r["base"]),
        }
        for cell, r in now.items()
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tools.drift", description=__doc__.split("\n\n")[0])
    p.add_argument("--base-tree", type=Path, required=True)
    p.add_argument("--head-tree", type=Path, required=True)
    p.add_argument("--sessions", type=int, default=7)
    p.add_argument("--every", type=float, default=10.0, help="minutes between session starts")
    p.add_argument("--processes", type=int, default=3)
    p.add_argument("--pairs", type=int, default=30)
    p.add_argument("--cells", default=DEFAULT_CELLS)
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    cells = [_cell(c) for c in args.cells.split(",")]
    started = time.monotonic()
    sessions = []
    for k in range(args.sessions):
        wait = started + k * args.every * 60 - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        got = session(args.head_tree, args.base_tree, cells, args.processes, args.pairs)
        sessions.append({"minute": (time.monotonic() - started) / 60, "cells": got})
        table = ratios(sessions[0]["cells"], got)
        if not args.json:
            print(f"session {k} at minute {sessions[-1]['minute']:.0f}")
            for cell, r in table.items():
                print(
                    f"  {cell:<42} base {r['base_ms']:7.2f} ms   stale {r['stale']:.3f}   interleaved "
                    f"{r['interleaved']:.3f}   duet {r['duet']:.3f}",
                    flush=True,
                )
    every = [ratios(sessions[0]["cells"], s["cells"]) for s in sessions[1:]]
    summary = {}
    for design in ("stale", "interleaved", "duet"):
        values = [r[design] for table in every for r in table.values()]
        summary[design] = {
            "median": statistics.median(values),
            "min": min(values),
            "max": max(values),
            "outside_5pct": sum(not 0.95 <= v <= 1.05 for v in values),
            "n": len(values),
        }
    if args.json:
        print(json.dumps({"sessions": sessions, "summary": summary}, indent=1))
    else:
        print("\nover sessions 1.. (an A/A: 1.0 is right)")
        for design, s in summary.items():
            print(
                f"  {design:<12} median {s['median']:.3f}  range [{s['min']:.3f}, {s['max']:.3f}]  "
                f"outside [0.95, 1.05]: {s['outside_5pct']} of {s['n']}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
