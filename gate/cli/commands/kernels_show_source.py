"""``fusegate kernels show-source``: the source the assembled implementation generates."""

from __future__ import annotations

import argparse

NAME = ("kernels", "show-source")
HELP = "print the generated source of an assembled kernel"


def arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--task", required=True, help="g1_walk or g1_motion")
    p.add_argument("--plan", metavar="FILE", help="a plan as JSON (kernels.spec format); default: the task's")


def run(args: argparse.Namespace) -> int:
    """Print the source the ``assembled`` implementation generates for a task's plan."""
    from kernels import registry

    plan = registry.default_plan(args.task) if args.plan is None else _read_plan(args.task, args.plan)
    generator = registry.kernel_class(args.task, "assembled")
    print(generator.generate(plan), end="")
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
