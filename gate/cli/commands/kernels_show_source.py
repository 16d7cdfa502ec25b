"""``fusegate kernels show-source``: the source a generated (assembled-from-plan) implementation writes."""

from __future__ import annotations

import argparse

NAME = ("kernels", "show-source")
HELP = "print the generated source of an assembled kernel"


def arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--task", required=True, help="g1_walk or g1_motion")
    p.add_argument("--plan", metavar="FILE", help="a plan as JSON (kernels.spec format); default: the task's")
    p.add_argument(
        "--impl",
        dest="generated",
        help="a generated implementation, e.g. assembled; default: the task's first that generates source",
    )


def run(args: argparse.Namespace) -> int:
    """Print the source a generated implementation (a kernel class with ``generate(plan)``) writes for a task's
    plan."""
    import sys

    from gate.cli import exits
    from kernels import registry

    plan = registry.default_plan(args.task) if args.plan is None else _read_plan(args.task, args.plan)
    impls = [args.generated] if args.generated else list(registry.available(args.task))
    generators = [
        c for c in map(lambda i: registry.kernel_class(args.task, i), impls) if hasattr(c, "generate")
    ]
    if not generators:
        print(
            f"{args.task}: {', '.join(impls)} generates no source (only an implementation assembled from a plan "
            "does); name one with --impl",
            file=sys.stderr,
        )
        return exits.USAGE
    print(generators[0].generate(plan), end="")
    return 0


def _read_plan(task: str, path: str):
    from kernels import registry
    from kernels.spec import plan_from_json

    try:
        with open(path) as f:
            text = f.read()
    except OSError as exc:
        raise ValueError(f"cannot read plan file {path}: {exc.strerror}") from None
    return plan_from_json(text, base=registry.default_plan(task), source=path)
