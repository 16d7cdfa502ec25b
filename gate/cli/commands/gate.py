"""``fusegate gate``: the verdict for (base, head), from the store or measured first (``--measure``)."""

from __future__ import annotations

import argparse

from gate.cli import output
from gate.cli.options import (
    DEFAULT_RESULTS,
    commits_of,
    db_option,
    judged_pair,
    minutes,
    rows_option,
)

NAME = ("gate",)
HELP = "the verdict for (base, head): exit 0 approve, 1 reject, 2 inconclusive, 3 error"


def arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--base", default="main", help="base commit or ref (default main); the policy is read from it"
    )
    p.add_argument("--head", default="HEAD", help="head commit or ref (default HEAD)")
    p.add_argument(
        "--results",
        default=DEFAULT_RESULTS,
        metavar="DIR",
        help="ingest this asv results_dir first if it exists",
    )
    p.add_argument(
        "--impl",
        action="append",
        default=[],
        metavar="IMPL",
        help="also judge IMPL against the baseline (only adds checks)",
    )
    p.add_argument("--json", action="store_true", help="print the evaluation as JSON (the API's schema)")
    p.add_argument(
        "--measure",
        action="store_true",
        help="benchmark (quick profile) base and head where the store has no results of them, then add rounds "
        "to undecided cells on both; the same command again goes on where it stopped",
    )
    p.add_argument(
        "--rounds",
        type=int,
        default=None,
        help="with --measure: processes per timed cell at first (default: each suite's own)",
    )
    p.add_argument(
        "--max-minutes",
        type=minutes,
        default=15.0,
        help="with --measure: add rounds only while the whole command stays within this (15)",
    )
    p.add_argument("--profile-time", action="store_true", help="with --measure: where the time went")
    p.add_argument(
        "--summary",
        metavar="FILE",
        help="also append the verdict's summary as markdown to FILE (e.g. $GITHUB_STEP_SUMMARY in a CI job); with FUSEGATE_URL set, its findings link to their dashboard cells",
    )
    rows_option(p)
    db_option(p)


def run(args: argparse.Namespace) -> int:
    from gate import git, policy
    from gate.api.schemas import EvaluationOut
    from gate.cli.options import repo_path
    from gate.domain.vocabulary import EXIT_CODES, Verdict
    from gate.services import verdicts

    repo = repo_path()
    policy.read_from_base(repo, git.resolve(repo, args.base))  # a policy that cannot be read: exit 78 first
    if args.measure:
        evaluation = _measured(args)
    else:
        url, repo, base, head = commits_of(args)
        base, head = judged_pair(repo, base, head, output.console(stderr=True).print)
        evaluation = verdicts.evaluate(url, repo=repo, base_sha=base, head_sha=head, extra_impls=args.impl)
    if args.json:
        print(EvaluationOut.model_validate(evaluation).model_dump_json(indent=2))
    else:
        output.print_verdict(evaluation, rows=args.rows)
    if args.summary:
        from gate.bot import rendering
        from gate.cli.options import settings

        commits = f"base `{evaluation.base_sha[:12]}` -> head `{evaluation.head_sha[:12]}`"
        text = rendering.markdown(
            evaluation,
            heading=f"### fusegate: {evaluation.verdict}",
            commits=commits,
            site=(settings().url or "").rstrip("/"),
        )
        with open(args.summary, "a") as f:
            f.write(text)
    return EXIT_CODES[Verdict(evaluation.verdict)]


def _measured(args: argparse.Namespace):
    """``--measure``: the arguments to the use case (``gate.runner.gating.measured_verdict``), then its time."""
    import time
    from pathlib import Path

    from gate.cli import placements
    from gate.cli.measure import LocalMeter, asv_machine
    from gate.cli.options import repo_path, store_url
    from gate.runner import gating

    started = time.monotonic()
    repo = repo_path()
    console = output.console(stderr=True)
    base, head = judged_pair(repo, args.base, args.head, console.print)
    machine = asv_machine(console.print)
    where = placements.here(machine, console.print)
    again = " ".join(
        ["fusegate", "gate", "--base", args.base, "--head", args.head, "--measure"]
        + (["--db", args.db] if args.db else [])
    )
    pair = gating.Pair(
        repo=repo,
        base=base,
        head=head,
        url=store_url(args),
        results=Path(args.results),
        where=where,
        deadline=started + args.max_minutes * 60,
        again=again,
        extra_impls=tuple(args.impl),
    )
    meter = LocalMeter(repo, console, where, rounds=args.rounds, profile_time=args.profile_time)
    evaluation = gating.measured_verdict(pair, meter, console)
    console.print(f"  {time.monotonic() - started:.0f} s in all")
    return evaluation
