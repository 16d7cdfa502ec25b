"""The gate tested like a product: real code changes on a throwaway branch, measured, judged, scored.

    python -m benchmarks.scenarios [--scenarios docs,extra_work,parity] [--runs 1] [--rounds 2] [--json]

Each run checks out the current HEAD in a temporary git worktree, measures it (the base) with asv on this
interpreter (``-E existing``, the worktree first on ``PYTHONPATH`` and ``ASV_PYTHONPATH`` so its own kernels
are imported: asv drops a plain ``PYTHONPATH``, and a first run that missed this judged the main tree), then for
each scenario commits a real change on top of the base, measures that head, and runs ``fusegate gate`` on the
pair in a scratch SQLite store. It prints expected against actual verdict per scenario with the rows that
decided, and the confusion table over all runs. The profile is the environment's (``FUSEGATE_BENCH_*``, e.g.
``FUSEGATE_BENCH_TASKS=g1_walk FUSEGATE_BENCH_THREADS=1`` to narrow it). Slow: kept out of the test run.

Scenarios (each a change a pull request could make):

- ``docs``: a README line (an A/A: the kernels' code is unchanged) -> approve;
- ``extra_work``: the assembled g1_walk kernel computes ``cmd_norm`` as a chain of 36 dependent square roots
  (same values; 3.5% more instructions per call, the run prints it) -> reject, by cost, on assembled g1_walk
  rows. Measured while choosing it: eight independent roots averaged added 0.96% (LLVM vectorised them) and
  the gate approved, as its 1% cost margin says; a chain of 24 added 2.3-2.4% and was rejected.
- ``parity``: the assembled g1_walk kernel's projected gravity z uses 2.1 where the spec has 2.0 -> reject, by a
  correctness row (parity with the NumPy reference).
- ``collector_breaks``: the assembled g1_walk kernel is made to tile envs by 128 and refuse any other N: the hot
  slice's scales (4096, 32768) still load, the collector's 64 envs do not -> reject, by a correctness row of the
  collector naming g1_walk, assembled and the ValueError (the seed review's failure: the collector could not be
  built with the assembled kernel while the hot slice looked fine).

Every run prints how the collector rows (``collector_vs_baseline``, ``collector_head_vs_base``) were decided.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GENERATOR = "kernels/assembled/g1_walk.py"


@dataclass(frozen=True)
class Scenario:
    name: str
    expected: str  # approve | reject
    path: str
    old: str  # text replaced in ``path``; empty: ``new`` is appended
    new: str
    expect_rows: str  # what the deciding rows should show, for the reader


SCENARIOS = {
    s.name: s
    for s in (
        Scenario("docs", "approve", "README.md", "", "\nA line of documentation.\n", "every row pass"),
        Scenario(
            "extra_work",
            "reject",
            GENERATOR,
            '"cmd_norm": (("cmd",), ("cmd_norm = math.sqrt(cx * cx + cy * cy + cz * cz)",)),',
            '"cmd_norm": (("cmd",), ("cmd_norm = 0.0", "for _r in range(36):", '
            '"    cmd_norm = math.sqrt(cx * cx + cy * cy + cz * cz + 1e-300 * cmd_norm)")),',
            "fail by cost: assembled g1_walk",
        ),
        Scenario(
            "parity",
            "reject",
            GENERATOR,
            '"grav_z = -(1.0 - 2.0 * (qx * qx + qy * qy))",',
            '"grav_z = -(1.0 - 2.1 * (qx * qx + qy * qy))",',
            "fail: correctness of assembled g1_walk",
        ),
        Scenario(
            "collector_breaks",
            "reject",
            GENERATOR,
            "    generate = staticmethod(generate)\n",
            "    generate = staticmethod(generate)\n\n"
            "    def __init__(self, **kwargs):\n"
            "        if kwargs['num_envs'] % 128:\n"
            "            raise ValueError(f\"the assembled g1_walk kernel tiles envs by 128, not {kwargs['num_envs']}\")\n"
            "        super().__init__(**kwargs)\n",
            "fail: correctness of the g1_walk assembled collector (CollectorCheck, CollectorPaired)",
        ),
    )
}


def _run(
    args: list[str], *, cwd: Path, env: dict | None = None, check: bool = True
) -> subprocess.CompletedProcess:
    done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    if check and done.returncode != 0:
        raise SystemExit(
            f"{' '.join(args)} exited with {done.returncode}:\n{done.stdout[-3000:]}{done.stderr[-3000:]}"
        )
    return done


def _git(tree: Path, *args: str) -> str:
    return _run(["git", "-C", str(tree), *args], cwd=tree).stdout.strip()


def _measure(tree: Path, sha: str, *, rounds: int, bench: str | None, env: dict) -> float:
    """asv on ``sha`` as ``fusegate run`` does it (the exact suites once, the timed ones ``rounds`` times), or
    ``bench`` at ``rounds``; the seconds it took."""
    t0 = time.perf_counter()
    from gate.domain import gate_asv_runs  # not at import: asv's environments have no gate dependencies

    runs = [("--bench", bench, "-a", f"rounds={rounds}")] if bench else gate_asv_runs(rounds)
    for extra in runs:
        _run(
            [
                sys.executable,
                "-m",
                "asv",
                "run",
                "-E",
                f"existing:{sys.executable}",
                "--set-commit-hash",
                sha,
                "--record-samples",
                *extra,
            ],
            cwd=tree,
            env={**env, "ASV_COMMIT": sha},
            check=False,
        )  # fmt: skip  (exit 2: a benchmark failed, which the gate reports)
    return time.perf_counter() - t0


def _gate(tree: Path, base: str, head: str, db: str, env: dict) -> dict:
    done = _run(
        [sys.executable, "-m", "gate.cli", "gate", "--base", base, "--head", head, "--results",
         str(tree / ".asv" / "results"), "--db", db, "--json"],
        cwd=tree, env={**env, "FUSEGATE_REPO": str(tree)}, check=False,
    )  # fmt: skip
    try:
        return json.loads(done.stdout)
    except json.JSONDecodeError:
        return {"verdict": "error", "reasons": [done.stderr[-2000:]], "comparisons": []}


def _deciding(evaluation: dict) -> list[str]:
    rows = [c for c in evaluation.get("comparisons", []) if c["decision"] in ("fail", "error")]
    return [
        f"{c['decision']} by {c.get('signal', '?')}: {c['kind']} {c['task']} {c['impl']} N={c['num_envs']} "
        f"thr={c['threads']} cost={c.get('cost_ratio') or 0:.4f} {c['reason'][:120]}"
        for c in rows
    ]


def run_once(names: list[str], *, rounds: int, bench: str, keep: Path | None) -> list[dict]:
    work = Path(keep or tempfile.mkdtemp(prefix="fusegate-scenarios-"))
    work.mkdir(parents=True, exist_ok=True)
    tree = work / "tree"
    base = _git(ROOT, "rev-parse", "HEAD")
    _run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(tree), base], cwd=ROOT)
    # asv drops PYTHONPATH from benchmark processes and passes ASV_PYTHONPATH on as PYTHONPATH instead
    env = {**os.environ, "PYTHONPATH": str(tree), "ASV_PYTHONPATH": str(tree), "GIT_AUTHOR_NAME": "scenario", "GIT_AUTHOR_EMAIL": "s@x",
           "GIT_COMMITTER_NAME": "scenario", "GIT_COMMITTER_EMAIL": "s@x"}  # fmt: skip
    db = f"sqlite:///{work / 'gate.db'}"
    results = []
    try:
        seconds = _measure(tree, base, rounds=rounds, bench=bench, env=env)
        print(f"base {base[:12]} measured in {seconds:.0f} s", file=sys.stderr)
        for name in names:
            s = SCENARIOS[name]
            _git(tree, "checkout", "--quiet", "--detach", base)
            path = tree / s.path
            text = path.read_text()
            if s.old and s.old not in text:
                raise SystemExit(
                    f"scenario {name}: the text to change is no longer in {s.path}; update the scenario"
                )
            path.write_text(text.replace(s.old, s.new, 1) if s.old else text + s.new)
            _run(["git", "-C", str(tree), "commit", "--quiet", "-am", f"scenario: {name}"], cwd=tree, env=env)
            head = _git(tree, "rev-parse", "HEAD")
            seconds = _measure(tree, head, rounds=rounds, bench=bench, env=env)
            evaluation = _gate(tree, base, head, db, env)
            hvb = [
                c
                for c in evaluation.get("comparisons", [])
                if c["kind"] == "head_vs_base" and c.get("cost_ratio")
            ]
            top = max(hvb, key=lambda c: c["cost_ratio"], default=None)
            collector = Counter(
                f"{c['kind']} {c['decision']}"
                for c in evaluation.get("comparisons", [])
                if c["kind"].startswith("collector")
            )
            row = {
                "scenario": name, "expected": s.expected, "actual": evaluation.get("verdict", "error"),
                "largest_cost_change": None if top is None else
                f"{top['cost_ratio']:.4f} ({top['task']} {top['impl']} N={top['num_envs']})",
                "measure_s": round(seconds), "deciding": _deciding(evaluation), "expect_rows": s.expect_rows,
                "collector_rows": dict(sorted(collector.items())),
                "reasons": evaluation.get("reasons", []),
            }  # fmt: skip
            print(f"{name}: expected {s.expected}, got {row['actual']} ({seconds:.0f} s)", file=sys.stderr)
            results.append(row)
    finally:
        _run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], cwd=ROOT, check=False)
    return results


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.scenarios", description=__doc__.split("\n\n")[0])
    p.add_argument("--scenarios", default=",".join(SCENARIOS), help=f"default: {','.join(SCENARIOS)}")
    p.add_argument("--runs", type=int, default=1, help="independent runs (a fresh base measurement each)")
    p.add_argument("--rounds", type=int, default=2, help="asv rounds (processes per cell)")
    p.add_argument(
        "--bench",
        help="one asv --bench regex at --rounds (default: the gate's suites as fusegate run runs them)",
    )
    p.add_argument("--keep", type=Path, help="work directory to keep (default: a temporary one)")
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    names = args.scenarios.split(",")
    unknown = [n for n in names if n not in SCENARIOS]
    if unknown:
        p.error(f"unknown scenario(s) {', '.join(unknown)}; known: {', '.join(SCENARIOS)}")
    rows = []
    for k in range(args.runs):
        keep = args.keep / f"run{k}" if args.keep else None
        rows += [
            {"run": k + 1, **r} for r in run_once(names, rounds=args.rounds, bench=args.bench, keep=keep)
        ]
    confusion = Counter((r["expected"], r["actual"]) for r in rows)
    if args.json:
        print(json.dumps({"rows": rows, "confusion": [[*k, v] for k, v in confusion.items()]}, indent=2))
    else:
        for r in rows:
            mark = "ok" if r["expected"] == r["actual"] else "WRONG"
            print(
                f"run {r['run']} {r['scenario']:<11} expected {r['expected']:<8} got {r['actual']:<12} {mark}  "
                f"largest head/base cost: {r['largest_cost_change']}"
            )
            for line in r["deciding"][:6]:
                print(f"    {line}")
            print(f"    collector rows: {r['collector_rows'] or 'none'}; head measured in {r['measure_s']} s")
            print(f"    {r['reasons'][-2] if len(r['reasons']) > 1 else ''}")
        print("\nconfusion (expected -> actual: count)")
        for (expected, actual), n in sorted(confusion.items()):
            print(f"  {expected:<8} -> {actual:<12} {n}")
    return 0 if all(r["expected"] == r["actual"] for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
