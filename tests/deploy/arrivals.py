"""Where an upload's CPU goes (``python -m tests.deploy.arrivals``), a measurement tool, not a test: N distinct
uploads of one machine's quick-profile results each, arriving one after another in this process on a fresh SQLite
store with an official verdict of (base, head) stored, under cProfile; per upload, the cumulative seconds of each
stage of ``gate.services.results.arrived`` and of the request's parsing. docs/measurements.md has its figures."""

from __future__ import annotations

import argparse
import cProfile
import pstats
import tempfile
from pathlib import Path

from gate.ingest import asv_dir
from gate.ingest import bundle as bundles
from gate.services import results, verdicts
from gate.store import db
from tests.gate import gitrepo
from tests.gate.builders import measure_results

STAGES = {  # (file suffix, function) -> what the table calls it
    ("gate/services/results.py", "arrived"): "arrived (all below)",
    ("gate/store/queries/ingest.py", "ingest_runs"): "store runs",
    ("gate/store/queries/ingest.py", "summarize_cells"): "  cell summaries (bootstrap)",
    ("gate/services/verdicts.py", "evaluate"): "re-evaluate",
    ("gate/ingest/bundle.py", "parse"): "parse the body",
    ("gate/ingest/bundle.py", "runs"): "validate the bundle",
}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.deploy.arrivals", description=__doc__)
    parser.add_argument("--uploads", type=int, default=40)
    args = parser.parse_args(argv)
    tmp = Path(tempfile.mkdtemp())
    repo, base, head = gitrepo.base_and_head(tmp / "repo", policy='compare = ["assembled"]\n')
    url = f"sqlite:///{tmp}/gate.db"
    db.upgrade(url)
    bodies = [
        asv_dir.read(measure_results(tmp / str(i), head if i % 2 else base, machine=f"m-{i:03d}", seed=i))[0]
        .model_dump_json()
        .encode()
        for i in range(args.uploads + 2)
    ]
    for body in bodies[:2]:  # base and head measured, and their verdict stored: every arrival re-evaluates it
        results.arrived(url, repo=repo, runs=bundles.runs(bundles.parse(body)))
    verdicts.evaluate(url, repo=repo, base_sha=base, head_sha=head)
    profile = cProfile.Profile()
    profile.enable()
    for body in bodies[2:]:
        results.arrived(url, repo=repo, runs=bundles.runs(bundles.parse(body)))
    profile.disable()
    stats = pstats.Stats(profile).stats
    print(f"{args.uploads} uploads, cumulative CPU seconds per upload (cProfile)")
    for (suffix, name), label in STAGES.items():
        seconds = sum(v[3] for (file, _, fn), v in stats.items() if fn == name and file.endswith(suffix))
        print(f"{label:32s} {seconds / args.uploads:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
