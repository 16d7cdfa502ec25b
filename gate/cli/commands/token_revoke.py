"""``fusegate token revoke``: a token stops working at once."""

from __future__ import annotations

import argparse

from gate.cli.options import (
    db_option,
    store_url,
)

NAME = ("token", "revoke")
HELP = "revoke a token by name"


def arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("name")
    db_option(p)


def run(args: argparse.Namespace) -> int:
    from gate.store import db, queries

    with db.transaction(store_url(args)) as session:
        if not queries.revoke_token(session, name=args.name):
            raise ValueError(f"no token named {args.name!r}")
    return 0
