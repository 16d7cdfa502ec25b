"""``fusegate rounds``: whether the service wants more benchmark rounds of (base, head) from this machine."""

from __future__ import annotations

import argparse

from gate.cli import exits, output
from gate.cli.options import need, settings

NAME = ("rounds",)
HELP = "exit 0 if the service wants more benchmark rounds of BASE..HEAD from this machine, else 1"


def arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--base", required=True)
    p.add_argument("--head", required=True)
    p.add_argument("--machine", help="asv machine name (default: $FUSEGATE_MACHINE)")
    p.add_argument("--url", help="the service (default: $FUSEGATE_URL)")
    p.add_argument(
        "--wait",
        type=float,
        default=120.0,
        metavar="S",
        help="wait this long for the service to evaluate the latest upload (default 120 s)",
    )


def run(args: argparse.Namespace) -> int:
    """Exit 0 when the service wants more rounds of (base, head) from this machine, 1 when not, 3 on no answer."""
    from gate.runner import upload as runner

    conf = settings()
    url = need(args.url or conf.url, "FUSEGATE_URL")
    machine = need(args.machine or conf.machine, "FUSEGATE_MACHINE")
    try:
        answer = runner.more_rounds(url=url, base=args.base, head=args.head, machine=machine, wait=args.wait)
    except runner.UploadError as exc:
        output.console(stderr=True).print(f"[yellow]{exc}[/]", soft_wrap=True)
        return exits.ERROR
    output.console(stderr=True).print(
        f"{machine}: {len(answer['cells'])} inconclusive cell(s) under the budget of {answer['budget']} processes; "
        + ("run more rounds" if answer["more"] else "no more rounds needed")
    )
    return 0 if answer["more"] else 1
