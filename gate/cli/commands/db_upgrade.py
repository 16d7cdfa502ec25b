"""``fusegate db upgrade``: create or migrate the store to the newest schema (alembic)."""

from __future__ import annotations

import argparse

from gate.cli import output
from gate.cli.options import (
    db_option,
    store_url,
)

NAME = ("db", "upgrade")
HELP = "create or migrate the store to the newest schema"


def arguments(p: argparse.ArgumentParser) -> None:
    db_option(p)


def run(args: argparse.Namespace) -> int:
    url = store_url(args)
    output.console().print(f"store at {url} is at the newest schema")
    return 0
