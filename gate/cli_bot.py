"""The runner's and the PR bot's commands: upload, rounds, bot bench. One function per command."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

from gate import git, render
from gate.cli_store import DEFAULT_RESULTS, _repo

EXIT_KEPT = 75  # EX_TEMPFAIL: results kept on disk for the next upload


def _need_env(name: str, value: str | None) -> str:
    value = value or os.environ.get(name)
    if not value:
        raise ValueError(f"{name} is not set: export it (or pass the option) on the runner")
    return value


def cmd_upload(args: argparse.Namespace) -> int:
    """Spool the results directory's bundles, then send everything spooled until the service acknowledges it."""
    from gate import runner
    from gate.ingest import asv_dir, bundle

    url = _need_env("FUSEGATE_URL", args.url)
    token = _need_env("FUSEGATE_TOKEN", None)
    spool_dir = Path(args.spool)
    console = render.console(stderr=True)
    results = Path(args.results)
    if results.is_dir():
        bundles = asv_dir.read(results, sidecar=Path(args.sidecar) if args.sidecar else None)
        for b in bundles:
            bundle.runs(b)  # validate here, with the same messages the service gives, before anything is kept
        runner.spool(bundles, spool_dir)
    elif args.results != DEFAULT_RESULTS:
        raise ValueError(f"--results {results} is not a directory")
    try:
        sent = runner.deliver(spool_dir, url=url, token=token, retry_for=args.retry_for)
    except runner.UploadError as exc:
        console.print(f"[yellow]{exc}[/]", soft_wrap=True)
        return EXIT_KEPT
    for s in sent:
        console.print(f"{s.file}: {s.outcome} ({s.detail})")
    if not sent:
        console.print(f"nothing to upload: no results in {results} and the spool {spool_dir} is empty")
    return 1 if any(s.outcome == "rejected" for s in sent) else 0


def cmd_rounds(args: argparse.Namespace) -> int:
    """Exit 0 when the service wants more rounds of (base, head) from this machine, 1 when not, 2 on no answer."""
    from gate import runner

    url = _need_env("FUSEGATE_URL", args.url)
    machine = _need_env("FUSEGATE_MACHINE", args.machine)
    try:
        answer = runner.more_rounds(url=url, base=args.base, head=args.head, machine=machine, wait=args.wait)
    except runner.UploadError as exc:
        render.console(stderr=True).print(f"[yellow]{exc}[/]", soft_wrap=True)
        return 2
    render.console(stderr=True).print(
        f"{machine}: {len(answer['cells'])} inconclusive cell(s) under the budget of {answer['budget']} processes; "
        + ("run more rounds" if answer["more"] else "no more rounds needed")
    )
    return 0 if answer["more"] else 1


def cmd_bot_bench(args: argparse.Namespace) -> int:
    from gate.bot import bench

    if bool(args.base) != bool(args.head):
        raise ValueError("give both --base and --head, or neither (the two newest commits of the results)")
    repo = _repo()
    base, head = (git.resolve(repo, args.base), git.resolve(repo, args.head)) if args.base else (None, None)
    row = bench.latency(results=Path(args.results), repo=repo, repeats=args.repeats, base=base, head=head)
    if args.json:
        print(json.dumps(row, indent=2))
    else:
        render.console().print(render.bot_bench_table(row))
    return 0


def add_commands(commands) -> None:
    up = commands.add_parser(
        "upload",
        help="send a results directory to the gate service; kept on disk until acknowledged, retried with backoff",
    )
    up.add_argument("--results", default=DEFAULT_RESULTS, metavar="DIR", help="asv results_dir")
    up.add_argument("--sidecar", metavar="DIR", help="sidecar directory (default: beside the results)")
    up.add_argument("--url", help="the service (default: $FUSEGATE_URL); the token is $FUSEGATE_TOKEN")
    up.add_argument(
        "--spool", default=".fusegate/outbox", metavar="DIR", help="where bundles wait for the service"
    )
    up.add_argument(
        "--retry-for", type=float, default=600.0, metavar="S",
        help="keep retrying an unreachable service this long (default 600 s), then exit 75 with the results kept",
    )  # fmt: skip
    up.set_defaults(func=cmd_upload)

    rounds = commands.add_parser(
        "rounds",
        help="exit 0 if the service wants more benchmark rounds of BASE..HEAD from this machine, else 1",
    )
    rounds.add_argument("--base", required=True)
    rounds.add_argument("--head", required=True)
    rounds.add_argument("--machine", help="asv machine name (default: $FUSEGATE_MACHINE)")
    rounds.add_argument("--url", help="the service (default: $FUSEGATE_URL)")
    rounds.add_argument(
        "--wait", type=float, default=120.0, metavar="S",
        help="wait this long for the service to evaluate the latest upload (default 120 s)",
    )  # fmt: skip
    rounds.set_defaults(func=cmd_rounds)

    bot = commands.add_parser("bot", help="the PR bot")
    bot_commands = bot.add_subparsers(dest="bot_command", required=True)
    bb = bot_commands.add_parser(
        "bench", help="time results-arrive -> status-posted through the real service and a loopback GitHub"
    )
    bb.add_argument(
        "--results",
        default=DEFAULT_RESULTS,
        metavar="DIR",
        help="asv results with two commits of one machine",
    )
    bb.add_argument("--base", help="base commit of the results (default: the older of the two newest)")
    bb.add_argument("--head", help="head commit of the results (default: the newest)")
    bb.add_argument("--repeats", type=int, default=20)
    bb.add_argument("--json", action="store_true")
    bb.set_defaults(func=cmd_bot_bench)
