"""``fusegate measure``: a runner's measurement of a pull request, for ``fusegate upload`` (no store, no verdict).

The base in its own tree, the head's subject with the base's meter, timed against the base in lockstep (docs/gate.md),
both commits' results gathered into ``--results`` for the upload. With ``--open-cells`` it asks the service which
of this machine's cells are still undecided and measures just those again (the runner workflow's loop): exit 0
when it added rounds, 1 when the service wants none, 3 when the service gave no answer.
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

from gate.cli import exits, output, placements
from gate.cli.options import DEFAULT_RESULTS, need, settings

NAME = ("measure",)
HELP = (
    "measure base and head for an upload: the head's subject with the base's meter, in lockstep with the base"
)


def arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--base", required=True, help="the base commit (its meter measures both)")
    p.add_argument("--head", required=True, help="the head commit")
    p.add_argument("--results", default=DEFAULT_RESULTS, metavar="DIR", help="where both commits' results go")
    p.add_argument(
        "--rounds", type=int, default=None, help="processes per timed cell (default: each suite's own)"
    )
    p.add_argument(
        "--open-cells",
        action="store_true",
        help="measure again only what the service (FUSEGATE_URL) says is undecided on this machine",
    )


def gather(side, results: Path) -> None:
    """Copy a side's asv results and sidecar records from its tree into ``results`` (and the sidecar beside)."""
    source = side.results
    if source.resolve() == results.resolve() or not source.is_dir():
        return
    for path in source.rglob("*.json"):
        target = results / path.relative_to(source)
        if path.name == "benchmarks.json" and target.exists():
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target)
    sidecar = source.parent / "fusegate" / side.sha[:8]
    if sidecar.is_dir():
        shutil.copytree(sidecar, results.parent / "fusegate" / side.sha[:8], dirs_exist_ok=True)


def run(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from gate.cli import measure as measuring
    from gate.cli.options import judged_pair, repo_path
    from gate.meter import cost
    from gate.runner import sides as commits

    repo = repo_path()
    console = output.console(stderr=True)
    base, head = judged_pair(repo, args.base, args.head, console.print)
    results = Path(args.results)
    machine = measuring.asv_machine(console.print)
    base_side = commits.side_of(repo, "base", base, results)
    sides = {"base": base_side}
    if head != base:
        head_side = commits.side_of(
            repo, "head", head, results, meter=base, say=measuring.say_plainly(console)
        )
        sides["head"] = replace(head_side, against=base_side)
    if args.open_cells:
        return _open_cells(args, sides, machine, repo, console, results)
    where = placements.here(machine, console.print)
    if head != base and _base_stored(base, where, machine, console):
        sides = {"head": sides["head"]}  # the lockstep pass still runs the base's kernels beside the head's
    cost.ensure_valgrind(install=True, say=console.print)
    for side in sides.values():
        measuring.measure(side, args.rounds, where, repo, console, profile_time=False)
        gather(side, results)
    console.print(f"results of {', '.join(s.sha[:12] for s in sides.values())} in {results}: fusegate upload")
    return exits.APPROVE


def _base_stored(base: str, where, machine, console) -> bool:
    """Whether the service (``FUSEGATE_URL``) has the base's runs at every placement of this machine: then
    only the head is measured. Without a service, or when it cannot answer, the base is measured."""
    from gate.runner import upload as runner

    conf = settings()
    name = conf.machine or machine
    if not conf.url or not name:
        return False
    asked = [at.machine if at.label else name for at in where]
    try:
        found = all(runner.stored(url=conf.url, commit=base, machine=m) for m in asked)
    except runner.UploadError as exc:
        console.print(f"  [yellow]{exc}[/]: measuring the base too", soft_wrap=True)
        return False
    if found:
        console.print(
            f"  base {base[:12]} is stored at {conf.url} for {', '.join(asked)}: measuring the head only"
        )
    return found


def _open_cells(args, sides, machine, repo, console, results) -> int:
    from types import SimpleNamespace

    from gate.cli import measure as measuring
    from gate.domain.vocabulary import Kind
    from gate.policy import Policy
    from gate.runner import gating, rounds
    from gate.runner import sides as commits
    from gate.runner import upload as runner

    conf = settings()
    url = need(conf.url, "FUSEGATE_URL")
    name = need(conf.machine or machine, "FUSEGATE_MACHINE")
    where = placements.here(machine, console.print)  # each placement's cells, under its own asv name
    meter = measuring.LocalMeter(repo, console, where, rounds=args.rounds)
    added = False
    for at in where:
        asked = at.machine if at.label else name
        try:
            answer = runner.more_rounds(
                url=url, base=sides["base"].sha, head=sides.get("head", sides["base"]).sha, machine=asked
            )
        except runner.UploadError as exc:
            console.print(f"[yellow]{exc}[/]", soft_wrap=True)
            return exits.ERROR
        if not answer["more"]:
            console.print(f"{asked}: no undecided cell the budget allows")
            continue
        cells = [SimpleNamespace(**c) for c in answer["cells"]]
        baseline = next(
            (c.baseline for c in cells if c.kind in (Kind.IMPL_VS_BASELINE, Kind.BEST_THREADS)), ""
        )
        policy = Policy(max_rounds=answer["budget"], baseline=baseline)
        for side_name, side in sides.items():
            chosen = rounds.open_benches(cells, policy, asked, side=side_name)
            if not chosen or not commits.has_results(side, at.machine):
                continue  # nothing open, or no results file here to append to (measure it first)
            gating.append(meter, side, at, chosen, rounds.seconds(chosen, commits.per_process(side)))
            gather(side, results)
            added = True
    return exits.APPROVE if added else exits.REJECT
