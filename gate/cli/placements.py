"""Where ``fusegate run``, ``measure`` and ``gate --measure`` measure: this machine's plan (``gate.meter.plan``)
as asv runs, one per placement, each under its own asv machine name.

- One NUMA node: one placement, the whole machine, under the machine's asv name. Its processes keep the CPU
  affinity and memory policy they were started with; the plan sets the thread counts and processes per cell.
- Several nodes: node 0 bound and the whole machine interleaved, as ``<machine>__node0`` and
  ``<machine>__interleaved`` (``gate.domain.machines.placement_machine``), each judged on its own. The
  collector's suites run on the first placement only; the cost pass is measured on the first and reused by the second.
- A placement named in the environment (``FUSEGATE_CPUS`` or ``FUSEGATE_MEMPOLICY``) is the only one measured:
  the operator chose it. Any ``FUSEGATE_BENCH_*`` setting in the environment wins over the plan's.

On a machine of more than 4 cores the quick profile's thread counts are three around the most common count of
this machine's kernel thread table (``fusegate threads --write``), the table the kernels load themselves. Its digest
is in the software fingerprint, so a base and a head measured with different tables are never compared: base and
head measure the same cells.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from gate.domain.machines import placement_machine

# A placement's CPUs and memory policy: set by the operator, that placement is the only one measured; a one-node
# machine's whole-machine placement leaves them unset (its processes keep what they were started with).
WHERE = ("FUSEGATE_CPUS", "FUSEGATE_MEMPOLICY")


@dataclass(frozen=True)
class PlacementRun:
    """One placement's asv runs: its asv machine name, its label ("" for a machine's only placement), the
    environment that applies it and whether it measures the once-per-commit suites."""

    machine: str | None
    label: str = ""
    env: Mapping[str, str] = field(default_factory=dict)
    first: bool = True

    def asv_args(self) -> tuple[str, ...]:
        return ("--machine", self.machine) if self.label and self.machine else ()

    def environment(self) -> dict[str, str]:
        """What the benchmark processes of this placement get on top of the caller's environment."""
        return (
            {**self.env, "FUSEGATE_ASV_MACHINE": self.machine}
            if self.label and self.machine
            else dict(self.env)
        )

    def describe(self) -> str:
        return f"{self.machine or 'this machine'} ({self.label or 'the whole machine'})"


def best_from_table() -> dict[str, int]:
    """The most common count of this machine's kernel thread table for every placement label, or {} without a
    table (the plan then takes the largest powers of two up to the cores)."""
    from kernels.kernel import thread_table

    counts = Counter(
        t
        for by_impl in thread_table().values()
        if isinstance(by_impl, dict)
        for by_n in by_impl.values()
        if isinstance(by_n, dict)
        for t in by_n.values()
        if isinstance(t, int) and not isinstance(t, bool) and t > 0
    )
    if not counts:
        return {}
    best = max(counts.items(), key=lambda kv: (kv[1], kv[0]))[0]
    return {"": best, "node0": best, "interleaved": best}


def runs(
    machine: str | None,
    *,
    profile: str,
    topology=None,
    environ: Mapping[str, str] | None = None,
    best: dict[str, int] | None = None,
) -> list[PlacementRun]:
    """The placements to measure on this machine (``topology``: default its sysfs), first to last."""
    from gate.meter import plan
    from gate.meter import topology as topologies

    environ = os.environ if environ is None else environ
    if any(environ.get(k) for k in WHERE):
        return [PlacementRun(machine)]
    t = topology if topology is not None else topologies.read().within(os.sched_getaffinity(0))
    if best is None:  # only a machine of more than plan.SMALL cores chooses its counts around the best
        best = best_from_table() if t.physical_cores() > plan.SMALL else {}
    chosen = plan.make(t, profile, best=best).placements
    if len(chosen) > 1 and not machine:
        raise ValueError(
            f"this machine has {len(t.nodes)} NUMA nodes, measured as one asv machine name per placement, and asv "
            "has no name for it: run `asv machine --yes` (or set FUSEGATE_CPUS and FUSEGATE_MEMPOLICY to measure one)"
        )
    out = []
    for k, p in enumerate(chosen):
        env = {key: value for key, value in p.env().items() if not environ.get(key)}
        if not p.label:
            env = {key: value for key, value in env.items() if key not in WHERE}
        name = placement_machine(machine, p.label) if machine else None
        out.append(PlacementRun(name, p.label, env, first=k == 0))
    return out


def register(placements: list[PlacementRun], path: Path | None = None) -> list[str]:
    """Register every placement's asv machine name with asv (its defaults, no questionnaire); returns the new ones."""
    import json

    path = path or Path.home() / ".asv-machine.json"
    try:
        known = set(json.loads(path.read_text()))
    except (OSError, ValueError):
        known = set()
    new = [p.machine for p in placements if p.label and p.machine and p.machine not in known]
    for name in new:
        done = subprocess.run(
            [sys.executable, "-m", "asv", "machine", "--machine", name, "--yes"],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode:
            raise ValueError(
                f"asv machine --machine {name} --yes failed: {(done.stderr or done.stdout)[-500:]}"
            )
    return new


def here(machine: str | None, say) -> list[PlacementRun]:
    """This machine's placements for the environment's profile, each asv name registered (``say`` is told of
    new ones)."""
    from gate.meter.profile import Profile

    where = runs(machine, profile=Profile.from_env().name)
    for name in register(where):
        say(f"registered the placement {name!r} with asv (one asv machine name per placement)")
    return where
