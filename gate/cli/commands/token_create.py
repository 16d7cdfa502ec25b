"""``fusegate token create``: a runner's upload token, printed once and stored hashed."""

from __future__ import annotations

import argparse
import secrets

from gate.cli import output
from gate.cli.options import (
    db_option,
    store_url,
)

NAME = ("token", "create")
HELP = "create a token and print it once"


def arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("name", help="e.g. the runner's machine name")
    p.add_argument("--machine", help="uploads only for this asv machine name (recommended for runners)")
    db_option(p)


def run(args: argparse.Namespace) -> int:
    from gate.store import db, queries

    url = store_url(args)
    secret = "fg_" + secrets.token_urlsafe(32)
    with db.transaction(url) as session:
        queries.create_token(session, name=args.name, secret=secret, machine=args.machine)
    print(secret)
    output.console(stderr=True).print(
        f"token {args.name!r} created; only its hash is stored, so keep it now (FUSEGATE_TOKEN on the runner)"
    )
    return 0
