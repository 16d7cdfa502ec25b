"""What a benchmark process costs besides measuring, two commits side by side: asv's own calls, alternating.

    python -m tools.process_overhead --before REF [--after REF] [--calls 3] [--bench REGEX]
                                          [--tasks g1_walk] [--against-edit FILE] [--json]

Checks both commits out in temporary worktrees, then runs the same asv call (``--bench``, default the hot-slice
suite on ``--tasks``' hand-written and assembled kernels, 2 processes per cell) in each tree in turn, ``--calls``
times each after one uncounted call each (it compiles the kernels into the new tree's Numba cache and writes
its snapshots), alternating which goes first (ABBA...), so the machine's slow phases fall on both. From each call's
process records (``.asv/fusegate/<commit>/processes/``, what ``python -m tools profile-time`` reads) it reports the
call's wall seconds and the median age of a benchmark process at its last teardown.

``--against-edit FILE`` measures a lockstep pass instead (``--bench`` defaults to ``hot_slice.AgainstBase``): each
commit is timed against a base tree of its own, the same commit with a comment appended to FILE (e.g.
``kernels/assembled/codegen.py``), so the kernels FILE reaches are timed against the base and both sides run one
meter. Kept out of the tests.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCH = r"^hot_slice\.HotSlice\."
AGAINST_BENCH = r"^hot_slice\.AgainstBase\."
NARROW = {
    "FUSEGATE_BENCH_TASKS": "g1_walk",
    "FUSEGATE_BENCH_IMPLS": "handwritten,assembled",
    "FUSEGATE_BENCH_HOT_ROUNDS": "2",
}


def _git(*args: str, cwd: Path = ROOT) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def one_call(tree: Path, sha: str, bench: str, narrow: dict, against: Path | None = None) -> dict:
    """One asv call in ``tree`` (timed against the tree ``against``, if given): its wall seconds and the ages of
    the benchmark processes it ran."""
    env = {
        **os.environ,
        **narrow,
        "ASV_PYTHONPATH": str(tree),
        "ASV_COMMIT": sha,
        "FUSEGATE_BENCH_GATE": "1",
        "FUSEGATE_REUSE": "1",
    }
    env.pop("FUSEGATE_BENCH_AGAINST", None)
    if against is not None:
        env |= {"FUSEGATE_BENCH_AGAINST": str(against), "FUSEGATE_BENCH_AGAINST_COMMIT": sha}
    since = time.time()
    t0 = time.monotonic()
    command = [
        sys.executable,
        "-m",
        "asv",
        "run",
        "-E",
        f"existing:{sys.executable}",
        "--set-commit-hash",
        sha,
    ]
    command += ["--record-samples", "--bench", bench]
    done = subprocess.run(command, cwd=tree, env=env, capture_output=True, text=True, check=False)
    wall = time.monotonic() - t0
    if done.returncode not in (0, 2):
        raise SystemExit(
            f"asv run in {tree} exited {done.returncode}:\n{done.stdout[-2000:]}{done.stderr[-2000:]}"
        )
    records = [
        json.loads(p.read_text())
        for p in (tree / ".asv" / "fusegate" / sha[:8] / "processes").glob("*.json")
        if p.stat().st_mtime >= since
    ]
    return {"wall_s": wall, "ages": [r["age_s"] for r in records]}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tools.process_overhead", description=__doc__.split("\n\n")[0])
    p.add_argument("--before", required=True, help="the commit before the change")
    p.add_argument("--after", default="HEAD", help="the commit after it (default HEAD)")
    p.add_argument("--calls", type=int, default=3, help="asv calls per commit")
    p.add_argument("--bench", help=f"asv's --bench of each call (default {BENCH}, or {AGAINST_BENCH})")
    p.add_argument("--tasks", default=NARROW["FUSEGATE_BENCH_TASKS"], help="the tasks of each call")
    p.add_argument(
        "--against-edit", help="time a lockstep pass against each commit with a comment in this file"
    )
    p.add_argument("--json", action="store_true", help="print the rows as JSON (tools.report's 'rows')")
    args = p.parse_args(argv)
    bench = args.bench or (AGAINST_BENCH if args.against_edit else BENCH)
    narrow = {**NARROW, "FUSEGATE_BENCH_TASKS": args.tasks}
    shas = {"before": _git("rev-parse", args.before), "after": _git("rev-parse", args.after)}
    with tempfile.TemporaryDirectory(prefix="fusegate-overhead-") as scratch:
        trees, bases = {}, {}
        for name, sha in shas.items():
            trees[name] = Path(scratch) / name
            _git("worktree", "add", "--detach", str(trees[name]), sha)
            if args.against_edit:
                bases[name] = Path(scratch) / f"{name}-base"
                _git("worktree", "add", "--detach", str(bases[name]), sha)
                with (bases[name] / args.against_edit).open("a") as edited:
                    edited.write("\n# The same code: a comment, so this tree's ids differ from its head's.\n")
        try:
            for name in shas:
                one_call(trees[name], shas[name], bench, narrow, bases.get(name))
            calls: dict[str, list[dict]] = {name: [] for name in shas}
            for k in range(args.calls):
                order = ["before", "after"] if k % 2 == 0 else ["after", "before"]
                for name in order:
                    calls[name].append(one_call(trees[name], shas[name], bench, narrow, bases.get(name)))
                    print(f"{name} call {k + 1}: {calls[name][-1]['wall_s']:.1f} s", file=sys.stderr)
        finally:
            for tree in [*trees.values(), *bases.values()]:
                _git("worktree", "remove", "--force", str(tree))
    rows = []
    for name, found in calls.items():
        walls = sorted(c["wall_s"] for c in found)
        ages = [a for c in found for a in c["ages"]]
        rows.append(
            {
                "commit": name,
                "asv calls": len(found),
                "wall s (median)": round(statistics.median(walls), 1),
                "wall s (range)": f"{walls[0]:.1f}-{walls[-1]:.1f}",
                "processes per call": round(len(ages) / len(found)),
                "process age s (median)": round(statistics.median(ages), 3) if ages else None,
                "process age s (p10-p90)": (
                    f"{statistics.quantiles(ages, n=10)[0]:.3f}-{statistics.quantiles(ages, n=10)[-1]:.3f}"
                    if len(ages) >= 2
                    else None
                ),
            }
        )
    if args.json:
        print(
            json.dumps({"bench": bench, "narrowed": narrow, "against_edit": args.against_edit, "rows": rows})
        )
    else:
        for r in rows:
            print("  ".join(f"{k}: {v}" for k, v in r.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
