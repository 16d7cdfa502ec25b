"""The gate's commands: ingest, gate, calibrate, serve, token, db. One function per command."""

from __future__ import annotations

import argparse
import json
import os
import secrets
from pathlib import Path

from gate import git, render

DEFAULT_RESULTS = ".asv/results"


def _repo() -> Path:
    return Path(os.environ.get("FUSEGATE_REPO", ".")).resolve()


def _url(args: argparse.Namespace) -> str:
    from gate.store import db

    url = args.db or db.default_url()
    db.upgrade(url)
    return url


def ingest_dir(url: str, results: Path, sidecar: Path | None = None) -> list:
    """Ingest every machine of an asv results directory in one transaction: all of it or, on any error, none."""
    from gate.ingest import asv_dir, bundle
    from gate.store import db, queries

    validated = [(b.machine["machine"], bundle.runs(b)) for b in asv_dir.read(results, sidecar=sidecar)]
    with db.transaction(url) as session:
        return [(machine, queries.ingest_runs(session, runs=runs)) for machine, runs in validated]


def cmd_ingest(args: argparse.Namespace) -> int:
    url = _url(args)
    for machine, report in ingest_dir(url, Path(args.results), Path(args.sidecar) if args.sidecar else None):
        render.console().print(
            f"{machine}: {report.stored} run(s) stored, {report.unchanged} unchanged, {report.results} results"
        )
    return 0


def _commits(args: argparse.Namespace) -> tuple[str, Path, str, str]:
    """(store URL, repository, base SHA, head SHA); ingests ``--results`` first when the command has it."""

    url = _url(args)
    repo = _repo()
    base, head = git.resolve(repo, args.base), git.resolve(repo, args.head)
    results = getattr(args, "results", None)
    if results and Path(results).is_dir():
        ingest_dir(url, Path(results))
    return url, repo, base, head


def cmd_gate(args: argparse.Namespace) -> int:
    from gate.api.schemas import EvaluationOut
    from gate.domain import EXIT_CODES, Verdict
    from gate.evaluate import evaluate_and_store
    from gate.store import db

    if args.measure:
        from gate.cli_run import gate_measured

        evaluation = gate_measured(args)
    else:
        url, repo, base, head = _commits(args)
        with db.transaction(url) as session:
            evaluation = EvaluationOut.model_validate(
                evaluate_and_store(session, repo=repo, base_sha=base, head_sha=head, extra_impls=args.impl)
            )
    if args.json:
        print(evaluation.model_dump_json(indent=2))
    else:
        render.print_verdict(evaluation)
    return EXIT_CODES[Verdict(evaluation.verdict)]


def cmd_calibrate(args: argparse.Namespace) -> int:
    from gate import policy
    from gate.evaluate import calibrate
    from gate.store import db

    url, repo, base, head = _commits(args)
    if not git.same_tree(repo, base, head) and not args.force:
        raise ValueError(
            f"{base[:12]} and {head[:12]} have different trees: an A/A calibration measures one build twice "
            "(commit an empty commit on top and measure both); --force skips this check"
        )
    pol, _ = policy.read_from_base(repo, base)
    with db.transaction(url) as session:
        floors = calibrate(session, base_sha=base, head_sha=head, cost_metric=pol.cost_metric)
    rows = [
        {
            "machine": m,
            "signal": "cost" if t == "cost" else "time",
            "threads": 1 if t == "cost" else t,
            **f.to_dict(),
        }
        for (m, t), f in floors.items()
    ]
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        for r in rows:
            what = f"cost ({pol.cost_metric})" if r["signal"] == "cost" else f"time threads={r['threads']}"
            render.console().print(
                f"{r['machine']} {what}: noise floor {r['noise_floor']:.2%}, "
                f"minimum detectable effect {r['mde']:.2%} ({r['cells']} A/A cells)"
            )
    return 0


def cmd_rules(args: argparse.Namespace) -> int:
    """asv's rule vs the gate's on the same stored samples, with slowdowns injected into the head."""
    from gate import policy, rules
    from gate.store import db

    url, repo, base, head = _commits(args)
    pol, _ = policy.read_from_base(repo, base)
    with db.transaction(url, write=False) as session:
        rows = rules.compare(session, base_sha=base, head_sha=head, policy=pol, injections=args.inject)
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        render.console().print(render.rules_table(rows, base, head))
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    import uvicorn

    from gate.api.app import create_app

    url = _url(args)
    render.console(stderr=True).print(
        f"fusegate serving {url} on http://{args.host}:{args.port} (docs: /docs)"
    )
    uvicorn.run(
        create_app(database_url=url, repo=_repo()), host=args.host, port=args.port, log_level="warning"
    )
    return 0


def cmd_token_create(args: argparse.Namespace) -> int:
    from gate.store import db, queries

    url = _url(args)
    secret = "fg_" + secrets.token_urlsafe(32)
    with db.transaction(url) as session:
        queries.create_token(session, name=args.name, secret=secret, machine=args.machine)
    print(secret)
    render.console(stderr=True).print(
        f"token {args.name!r} created; only its hash is stored, so keep it now (FUSEGATE_TOKEN on the runner)"
    )
    return 0


def cmd_token_revoke(args: argparse.Namespace) -> int:
    from gate.store import db, queries

    with db.transaction(_url(args)) as session:
        if not queries.revoke_token(session, name=args.name):
            raise ValueError(f"no token named {args.name!r}")
    return 0


def cmd_db_upgrade(args: argparse.Namespace) -> int:
    url = _url(args)
    render.console().print(f"store at {url} is at the newest schema")
    return 0


def cmd_store_bench(args: argparse.Namespace) -> int:
    """Fill a store to --results (if it holds fewer) and time complete evaluations of a 200-cell PR on it."""
    from gate.store import db, queries, scale

    url = _url(args)
    with db.transaction(url) as session:
        have = queries.count_results(session)
    console = render.console(stderr=True)
    if have < args.results:
        if have:
            raise ValueError(
                f"{url} holds {have} results, fewer than --results {args.results}; use an empty store"
            )
        console.print(f"filling {url} with {args.results} results through the ingest path")
        commits = scale.fill(
            url, results=args.results, progress=lambda n: console.print(f"  {n} results", end="\r")
        )
    else:
        commits = scale.fill_commits(url)
    with db.transaction(url) as session:
        total = queries.count_results(session)
    row = scale.time_evaluations(
        url, repo=_repo(), base=commits["base"], head=commits["head"], repeats=args.repeats
    )
    row = {"results_in_store": total, **row}
    if args.json:
        print(json.dumps(row, indent=2))
    else:
        render.console().print(render.store_bench_table(row, url))
    return 0


def _factors(text: str) -> list[float]:
    try:
        values = [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated factors such as 1,1.05,1.1, got {text!r}"
        ) from None
    if not values or any(not v > 0 for v in values):
        raise argparse.ArgumentTypeError(f"factors must be positive, got {text!r}")
    return values


def _minutes(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected a positive number of minutes, got {text!r}")
    return value


def _db_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--db",
        metavar="URL",
        help="store URL (default: $FUSEGATE_DATABASE_URL or sqlite:///.fusegate/fusegate.db)",
    )


def add_commands(commands) -> None:
    ingest = commands.add_parser(
        "ingest", help="store asv results (and the fusegate sidecar) in the results store"
    )
    ingest.add_argument(
        "results", nargs="?", default=DEFAULT_RESULTS, help=f"asv results_dir (default {DEFAULT_RESULTS})"
    )
    ingest.add_argument(
        "--sidecar", metavar="DIR", help="fusegate sidecar directory (default: <results>/../fusegate)"
    )
    _db_option(ingest)
    ingest.set_defaults(func=cmd_ingest)

    gate = commands.add_parser(
        "gate", help="the verdict for (base, head): exit 0 approve, 1 reject, 2 inconclusive, 3 error"
    )
    gate.add_argument(
        "--base", default="main", help="base commit or ref (default main); the policy is read from it"
    )
    gate.add_argument("--head", default="HEAD", help="head commit or ref (default HEAD)")
    gate.add_argument(
        "--results",
        default=DEFAULT_RESULTS,
        metavar="DIR",
        help="ingest this asv results_dir first if it exists",
    )
    gate.add_argument(
        "--impl",
        action="append",
        default=[],
        metavar="IMPL",
        help="also judge IMPL against the baseline (only adds checks)",
    )
    gate.add_argument("--json", action="store_true", help="print the evaluation as JSON (the API's schema)")
    gate.add_argument(
        "--measure",
        action="store_true",
        help="benchmark (quick profile) base and head where the store has no results of them, then add rounds "
        "to undecided cells on both; the same command again goes on where it stopped",
    )
    gate.add_argument("--rounds", type=int, default=None,
                      help="with --measure: processes per timed cell at first (default: each suite's own)")  # fmt: skip
    gate.add_argument("--max-minutes", type=_minutes, default=15.0,
                      help="with --measure: add rounds only while the whole command stays within this (15)")  # fmt: skip
    gate.add_argument("--profile-time", action="store_true", help="with --measure: where the time went")
    _db_option(gate)
    gate.set_defaults(func=cmd_gate)

    cal = commands.add_parser(
        "calibrate", help="learn each machine's noise floor from an A/A pair of commits"
    )
    cal.add_argument("--base", required=True, help="first commit of the A/A pair")
    cal.add_argument("--head", required=True, help="second commit (same tree)")
    cal.add_argument(
        "--results",
        default=DEFAULT_RESULTS,
        metavar="DIR",
        help="ingest this asv results_dir first if it exists",
    )
    cal.add_argument("--force", action="store_true", help="calibrate even if the two trees differ")
    cal.add_argument("--json", action="store_true")
    _db_option(cal)
    cal.set_defaults(func=cmd_calibrate)

    rl = commands.add_parser(
        "rules", help="asv's rule vs the gate's on stored samples, with injected slowdowns"
    )
    rl.add_argument("--base", required=True)
    rl.add_argument("--head", required=True)
    rl.add_argument("--inject", type=_factors, default=[1.0, 1.05, 1.1, 1.2], metavar="F[,F...]",
                    help="slowdown factors applied to the head's samples (default 1,1.05,1.1,1.2)")  # fmt: skip
    rl.add_argument("--json", action="store_true")
    _db_option(rl)
    rl.set_defaults(func=cmd_rules)

    serve = commands.add_parser("serve", help="run the gate service (FastAPI, uvicorn)")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    _db_option(serve)
    serve.set_defaults(func=cmd_serve)

    token = commands.add_parser("token", help="runner upload tokens (stored hashed)")
    token_commands = token.add_subparsers(dest="token_command", required=True, metavar="COMMAND")
    create = token_commands.add_parser("create", help="create a token and print it once")
    create.add_argument("name", help="e.g. the runner's machine name")
    create.add_argument("--machine", help="uploads only for this asv machine name (recommended for runners)")
    _db_option(create)
    create.set_defaults(func=cmd_token_create)
    revoke = token_commands.add_parser("revoke", help="revoke a token by name")
    revoke.add_argument("name")
    _db_option(revoke)
    revoke.set_defaults(func=cmd_token_revoke)

    store = commands.add_parser("store", help="results store at scale")
    store_commands = store.add_subparsers(dest="store_command", required=True, metavar="COMMAND")
    sb = store_commands.add_parser(
        "bench", help="fill a store and time complete evaluations of a 200-cell PR on it"
    )
    sb.add_argument("--results", type=int, default=100_000, help="results in the store (default 100000)")
    sb.add_argument("--repeats", type=int, default=30, help="evaluations timed (default 30)")
    sb.add_argument("--json", action="store_true")
    _db_option(sb)
    sb.set_defaults(func=cmd_store_bench)

    dbp = commands.add_parser("db", help="the results store")
    db_commands = dbp.add_subparsers(dest="db_command", required=True, metavar="COMMAND")
    up = db_commands.add_parser("upgrade", help="create or migrate the store to the newest schema")
    _db_option(up)
    up.set_defaults(func=cmd_db_upgrade)
