"""``fusegate threads``: the best thread count per task, implementation and scale from the store, and the table the
kernels read in place of their fixed rule.

From a commit's hot-slice timings (``HotSlice.time_update_state``: the full profile's thread curve, or whatever the
profile measured) on each machine and placement, the thread count with the lowest median time per (task,
implementation, envs). ``--write`` saves this machine's as the table the kernels load at run time
(``kernels.kernel.thread_table``: FUSEGATE_THREAD_TABLE, else ~/.config/fusegate/threads.json), keyed by the
machine's CPU model and logical CPUs so another machine's table is never used. The table is part of the software
fingerprint of every result measured with it.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

from rich.table import Table

from gate.cli import output
from gate.cli.options import db_option, repo_path, store_url
from gate.domain.vocabulary import Status

NAME = ("threads",)
HELP = "the best thread count per task, implementation and scale from the store; --write: the kernels' table"


def arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--commit", default="HEAD", help="whose timings (default HEAD)")
    p.add_argument(
        "--machine", help="the machine whose table --write saves (default: the only one, or this one's name)"
    )
    p.add_argument(
        "--write",
        nargs="?",
        const="",
        metavar="FILE",
        help="save the machine's table for the kernels (default path: FUSEGATE_THREAD_TABLE or "
        "~/.config/fusegate/threads.json)",
    )
    p.add_argument("--json", action="store_true")
    db_option(p)


def best_threads(summaries) -> dict[tuple, dict]:
    """(machine, placement label, task, impl, num_envs) -> {threads, ms, by_threads} from (machine, placement hash,
    label, summary) rows of ``gate.store.queries.summaries``."""
    from gate.domain.benchmarks import TIME

    curves: dict[tuple, dict[int, float]] = {}
    for machine, _, label, c in summaries:
        if c.benchmark == TIME and c.status == Status.OK and c.threads:
            curves.setdefault((machine, label, c.task, c.impl, c.num_envs), {})[c.threads] = math.exp(
                c.center
            )
    return {
        key: {
            "threads": min(curve, key=curve.get),
            "ms": 1e3 * min(curve.values()),
            "by_threads": {t: 1e3 * s for t, s in sorted(curve.items())},
        }
        for key, curve in curves.items()
    }


def run(args: argparse.Namespace) -> int:
    from gate import git
    from gate.store import db, queries

    repo = repo_path()
    sha = git.resolve(repo, args.commit)
    with db.transaction(store_url(args), write=False) as session:
        rows = queries.summaries(session, commit_sha=sha)
        fingerprints = {m.name: m.fingerprint for m in queries.machines(session)}
    found = best_threads(rows)
    if not found:
        raise ValueError(
            f"no hot-slice timings of {sha[:12]} in the store: measure it (fusegate run, or the full "
            "profile: FUSEGATE_BENCH_PROFILE=full fusegate run)"
        )
    if args.json:
        print(
            json.dumps(
                [
                    {"machine": k[0], "placement": k[1], "task": k[2], "impl": k[3], "num_envs": k[4], **v}
                    for k, v in sorted(found.items())
                ],
                indent=2,
            )
        )
    else:
        table = Table(title=f"Best thread count per scale at {sha[:12]} (median time, ms)")
        for col in ("machine", "placement", "task", "impl", "N", "best", "ms", "curve (threads: ms)"):
            table.add_column(col, justify="right" if col in ("N", "best", "ms") else "left")
        for (machine, label, task, impl, n), v in sorted(found.items()):
            curve = "  ".join(f"{t}: {ms:.3g}" for t, ms in v["by_threads"].items())
            table.add_row(machine, label, task, impl, str(n), str(v["threads"]), f"{v['ms']:.3g}", curve)
        output.console().print(table)
    if args.write is not None:
        machines = sorted({k[0] for k in found})
        machine = args.machine or (machines[0] if len(machines) == 1 else None)
        if machine not in machines:
            raise ValueError(f"--machine: one of {', '.join(machines)}, got {args.machine!r}")
        _write(args.write, machine, fingerprints.get(machine, {}), found)
    return 0


def _write(path: str, machine: str, fingerprint: dict, found: dict) -> None:
    from kernels.kernel import THREAD_TABLE_FORMAT, thread_table_path

    table: dict[str, dict[str, dict[str, int]]] = {}
    for (m, _label, task, impl, n), v in sorted(found.items()):
        if m == machine:  # the first placement's (labels sort: node0 before interleaved, "" alone)
            table.setdefault(task, {}).setdefault(impl, {}).setdefault(str(n), v["threads"])
    target = Path(path) if path else thread_table_path()
    key = f"{fingerprint.get('cpu_model', '')} x{fingerprint.get('logical_cpus', '')}"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(
        json.dumps({"format": THREAD_TABLE_FORMAT, "machine": key, "from": machine, "table": table}, indent=2)
    )
    output.console(stderr=True).print(f"the kernels' thread table for {machine} ({key}): {target}")
