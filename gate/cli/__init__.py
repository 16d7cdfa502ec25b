"""The ``fusegate`` command. One module per command under ``gate/cli/commands/`` (asv's ``commands/`` layout):
each names itself (``NAME``, ``HELP``), adds its ``arguments`` and ``run``s, rendering its own output. Commands
that drive the kernels import them when they run, so the gate's own commands start without Numba."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from importlib import import_module

from gate.cli import exits
from gate.cli.options import kernel_defaults


class Parser(argparse.ArgumentParser):
    """A usage error exits with ``exits.USAGE`` (64) after the usage of the (sub)command that was given."""

    def error(self, message: str):
        self.print_usage(sys.stderr)
        self.exit(exits.USAGE, f"{self.prog}: error: {message}\n")

    def parse_known_args(self, args=None, namespace=None):
        """A subcommand refuses what it does not know itself, so its own usage is the one printed."""
        namespace, extras = super().parse_known_args(args, namespace)
        if extras and self.prog != "fusegate":
            self.error(f"unrecognized arguments: {' '.join(extras)}")
        return namespace, extras


def version() -> str:
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return installed("fusegate")
    except PackageNotFoundError:
        return "unknown (not installed)"


# In the order ``fusegate --help`` lists them.
COMMANDS = (
    "run",
    "gate",
    "judge",
    "measure",
    "plan",
    "threads",
    "ingest",
    "serve",
    "upload",
    "rounds",
    "calibrate",
    "pairs",
    "collect",
    "kernels_parity",
    "kernels_bench",
    "kernels_cost",
    "kernels_show_source",
    "token_create",
    "token_revoke",
    "db_upgrade",
)
GROUPS = {
    "kernels": "check and time the update_state kernels",
    "token": "runner upload tokens (stored hashed)",
    "db": "the results store",
}


def _plain(doc: str | None) -> str | None:
    """A command's docstring as help text: without the reST markup (``code`` becomes code)."""
    return doc.replace("``", "") if doc else doc


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="fusegate",
        description="Performance-regression gate for fused RL-environment kernels.",
        epilog=exits.epilog(),
    )
    parser.add_argument("--version", action="version", version=f"fusegate {version()}")
    top = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=Parser)
    groups: dict[str, argparse._SubParsersAction] = {}
    for name in COMMANDS:
        command = import_module(f"gate.cli.commands.{name}")
        sub = top
        if len(command.NAME) == 2:
            group = command.NAME[0]
            if group not in groups:
                groups[group] = top.add_parser(group, help=GROUPS[group]).add_subparsers(
                    dest=f"{group}_command", required=True, metavar="COMMAND", parser_class=Parser
                )
            sub = groups[group]
        add_command(sub, command)
    return parser


def add_command(sub: argparse._SubParsersAction, command) -> None:
    """A command module (``NAME``, ``HELP``, its docstring, ``arguments``, ``run``) as the parser ``sub`` adds."""
    p = sub.add_parser(command.NAME[-1], help=command.HELP, description=_plain(command.__doc__))
    command.arguments(p)
    p.set_defaults(func=command.run)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        kernel_defaults(args)
        if args.command in ("run", "measure") or getattr(args, "measure", False):
            from gate.meter.profile import Profile

            Profile.from_env()  # a bad FUSEGATE_BENCH_* value stops here, before any tree or benchmark
        return args.func(args)
    except ValueError as exc:  # bad input or configuration that got past argparse: say what, not a traceback
        print(f"fusegate: error: {exc}", file=sys.stderr)
        return exits.of_error(exc)


if __name__ == "__main__":
    sys.exit(main())
