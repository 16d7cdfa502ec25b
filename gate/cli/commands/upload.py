"""``fusegate upload``: a runner's results to the service, spooled on disk until acknowledged."""

from __future__ import annotations

import argparse
from pathlib import Path

from gate.cli import exits, output
from gate.cli.options import DEFAULT_RESULTS, need, settings

NAME = ("upload",)
HELP = "send a results directory to the gate service; kept on disk until acknowledged, retried with backoff"


def arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--results", default=DEFAULT_RESULTS, metavar="DIR", help="asv results_dir")
    p.add_argument("--sidecar", metavar="DIR", help="sidecar directory (default: beside the results)")
    p.add_argument("--url", help="the service (default: $FUSEGATE_URL); the token is $FUSEGATE_TOKEN")
    p.add_argument(
        "--spool", default=".fusegate/outbox", metavar="DIR", help="where bundles wait for the service"
    )
    p.add_argument(
        "--retry-for",
        type=float,
        default=600.0,
        metavar="S",
        help="keep retrying an unreachable service this long (default 600 s), then exit 75 with the results kept",
    )


def run(args: argparse.Namespace) -> int:
    """Spool the results directory's bundles, then send everything spooled until the service acknowledges it."""
    from gate.ingest import asv_dir, bundle
    from gate.runner import upload as runner

    conf = settings()
    url = need(args.url or conf.url, "FUSEGATE_URL")
    token = need(conf.token and conf.token.get_secret_value(), "FUSEGATE_TOKEN")
    spool_dir = Path(args.spool)
    console = output.console(stderr=True)
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
        return exits.KEPT
    for s in sent:
        console.print(f"{s.file}: {s.outcome} ({s.detail})")
    if not sent:
        console.print(f"nothing to upload: no results in {results} and the spool {spool_dir} is empty")
    return 1 if any(s.outcome == "rejected" for s in sent) else 0
