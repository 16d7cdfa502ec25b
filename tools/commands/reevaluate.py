"""``python -m tools reevaluate``: every stored (base, head) pair judged again by this code; with ``--against``, the
differences from an earlier output (exit 1 when there are any)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from gate.cli import exits
from gate.cli.options import db_option, repo_path, store_url

NAME = ("reevaluate",)
HELP = "judge every stored pair again; compare with an earlier output"


def arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--against", type=Path, metavar="FILE", help="an earlier --json output to compare with")
    p.add_argument("--json", action="store_true", help="print the judged rows as JSON")
    db_option(p)


def run(args: argparse.Namespace) -> int:
    from gate.store import db
    from tools import reevaluate

    url = store_url(args)
    with db.transaction(url, write=False) as session:
        now = reevaluate.judged(session, repo=repo_path())
    if args.json:
        print(json.dumps(now, indent=1, default=str))
    if args.against is None:
        if not args.json:
            for p in now:
                print(f"{p['base'][:12]} -> {p['head'][:12]}: {p['verdict']} ({len(p['rows'])} rows)")
        return exits.APPROVE
    try:
        before = json.loads(args.against.read_text())
    except (OSError, ValueError) as exc:
        raise ValueError(f"--against {args.against}: {exc}") from None
    found = reevaluate.differences(before, now)
    for line in found:
        print(line)
    rows = sum(len(p["rows"]) for p in now)
    print(f"{len(now)} pairs, {rows} rows: {len(found)} difference(s)")
    return exits.REJECT if found else exits.APPROVE
