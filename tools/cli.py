"""``python -m tools``: the maintainers' commands, one module each under ``tools/commands/``, parsed and run as
``fusegate``'s are (``gate.cli``: the same usage errors and exit codes)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from importlib import import_module

from gate.cli import Parser, add_command, exits

PROG = "python -m tools"

# In the order ``python -m tools --help`` lists them.
COMMANDS = ("rules", "store_bench", "dashboard_bench", "changepoints_bench", "reevaluate", "profile_time")

# The tools with a ``main`` of their own: ``python -m tools.NAME``.
MODULES = ("scenarios", "drift", "duet_settings", "process_overhead", "collector_seeds", "bimodal", "report")


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog=PROG,
        description="The maintainers' measurements of the gate itself (not installed with fusegate).",
        epilog="Also: " + ", ".join(f"{PROG}.{m}" for m in MODULES) + ".",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=Parser)
    for name in COMMANDS:
        add_command(sub, import_module(f"tools.commands.{name}"))
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except ValueError as exc:  # bad input that got past argparse: say what, not a traceback
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return exits.of_error(exc)
