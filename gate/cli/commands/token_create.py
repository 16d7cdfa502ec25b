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
    p.add_argument("name", help="the runner's machine name (a runner's token uploads for that machine only)")
    bound = p.add_mutually_exclusive_group()
    bound.add_argument("--machine", help="uploads only for this asv machine name (default: NAME)")
    bound.add_argument(
        "--any-machine",
        action="store_true",
        help="uploads for any machine (a shared CI token; not recommended)",
    )
    p.add_argument(
        "--role",
        choices=("runner", "admin"),
        default="runner",
        help="runner: uploads results (default); admin: also POST /api/evaluations as the official verdict",
    )
    db_option(p)


def run(args: argparse.Namespace) -> int:
    from gate.store import db, queries

    url = store_url(args)
    secret = "fg_" + secrets.token_urlsafe(32)
    if args.any_machine or (args.role == "admin" and args.machine is None):
        machine = None
    else:
        machine = args.machine or args.name
    with db.transaction(url) as session:
        queries.create_token(session, name=args.name, secret=secret, machine=machine, role=args.role)
    print(secret)
    bound = f"uploads for machine {machine!r} only" if machine else "uploads for any machine"
    output.console(stderr=True).print(
        f"{args.role} token {args.name!r} created ({bound}); only its hash is stored, so keep it now "
        "(FUSEGATE_TOKEN on the runner)"
    )
    return 0
