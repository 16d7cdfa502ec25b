"""What a profile measures on a machine: placements, thread counts and scales, from its topology.

- **Placements.** One NUMA node: the whole machine. More than one: node 0 bound (its CPUs, memory ``bind:0``)
  and the whole machine interleaved (every CPU, memory ``interleave`` over every node): the two configurations
  users found to rank the kernels differently. Each is measured per commit under its own asv machine name
  (``<machine>__<label>``, ``gate.domain.placement_machine``) and judged on its own; the collector's suites run
  on the first only.
- **Threads.** The quick profile: 1 and the placement's CPUs on a machine of up to 4 cores (nothing to choose
  between); on a larger one, three counts around the best known count per scale (``best``, from the store:
  ``fusegate threads``) when there is one, else the three largest powers of two up to the placement's physical
  cores. The full profile: every power of two up to the placement's hardware threads, the thread curve.
- **Scales, tasks, implementations.** The declared subject's (``gate.meter.subject``): the grid of the profile
  in its ``[tool.fusegate]`` table, the registry's tasks and each task's implementations, the paired ones the
  table's.

The estimate is this machine's seconds per cell of each suite (its newest asv results, or the defaults measured on
the 2-vCPU development machine) times the plan's cells. Quick (``fusegate plan`` is instant): the registry
discovers the tasks without importing Numba or a kernel. The plan is the base's, like the rest of the meter:
base and head measure the same cells.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from gate import domain
from gate.meter import subject
from gate.meter.profile import Profile
from gate.meter.topology import Topology, format_cpu_list

PROFILES = ("quick", "full")
SMALL = 4  # up to this many cores, the quick profile measures 1 thread and every CPU
# Seconds per cell of each suite on the 2-vCPU development machine (quick profile), the estimate without history:
# ``domain.SUITE_SECONDS`` over the cells each suite measured there (26 HotSlice cells in 6 processes each, so a
# cell-process is 1/6 of it; 26 AgainstBase cells, 8 Paired, 20 cost cells, 8 collector checks, 2 paired collector
# cells, 6 collector lockstep cells).
_CELLS = {
    "hot_slice.HotSlice": 26 * 6,  # per process of a cell: the plan sets the processes
    "hot_slice.Paired": 8 * 3,  # per process of a cell, as HotSlice
    "cost.Cost": 20,
    "collector.CollectorCheck": 8,
    "collector.CollectorPaired": 2,
    "hot_slice.AgainstBase": 26,
    "collector.CollectorAgainstBase": 6,
}
PER_CELL_S = {suite: domain.SUITE_SECONDS[suite] / n for suite, n in _CELLS.items()}
# Suites measured once per commit whatever the placements, on the first: the collector's (1-thread cells in the
# quick profile). The cost signal (1 thread under callgrind, exact, independent of where it runs) is measured on
# the first placement and reused by the others (benchmarks/_common.py ``reusable``): it costs time once.
ONCE = (
    "collector.CollectorCheck",
    "collector.CollectorPaired",
    "collector.CollectorAgainstBase",
)
REUSED = ("cost.Cost",)
# HotSlice processes per cell: 6 short ones where raw times are all a small machine has; 2 on a larger one, where
# the raw times only inform (head vs base is timed in lockstep, implementation vs baseline in one process).
HOT_ROUNDS_SMALL, HOT_ROUNDS = 6, 2
HEAD_HOT_ROUNDS = 2  # a head timed against its base in lockstep (benchmarks/_common.py)
# Paired processes per cell (each alternates 40 pairs in itself): the default's on a small machine, 2 on a larger one
PAIRED_ROUNDS_SMALL, PAIRED_ROUNDS_LARGE = domain.PAIRED_ROUNDS, 2


@dataclass(frozen=True, kw_only=True)
class PlacementPlan:
    label: str  # the asv machine name's suffix ("" for the only placement of a one-node machine)
    cpus: tuple[int, ...]
    mem: str  # memory policy, gate.meter.placement's syntax
    threads: tuple[int, ...]
    hot_rounds: int = HOT_ROUNDS_SMALL  # HotSlice processes per cell
    paired_rounds: int = PAIRED_ROUNDS_SMALL  # Paired processes per cell

    def env(self) -> dict[str, str]:
        """The FUSEGATE_* settings that apply it in every benchmark process (gate.meter.placement)."""
        bench = Profile(threads=self.threads, hot_rounds=self.hot_rounds, paired_rounds=self.paired_rounds)
        return {
            "FUSEGATE_CPUS": format_cpu_list(self.cpus),
            "FUSEGATE_MEMPOLICY": self.mem,
            **bench.env("threads", "hot_rounds", "paired_rounds"),
        }


@dataclass(frozen=True, kw_only=True)
class Plan:
    profile: str
    topology: Topology
    placements: tuple[PlacementPlan, ...]
    scales: tuple[int, ...]
    cells: dict[str, int] = field(default_factory=dict)  # suite -> cells over every placement (not processes)
    estimated_s: float = 0.0
    head: bool = True  # the estimate of a head (with its lockstep pass against the base)

    def rows(self) -> list[dict]:
        return [
            {
                "placement": p.label or "whole machine",
                "cpus": format_cpu_list(p.cpus),
                "mem": p.mem,
                "threads": list(p.threads),
                "scales": list(self.scales),
            }
            for p in self.placements
        ]


def powers_of_two(upto: int) -> list[int]:
    out, k = [], 1
    while k <= upto:
        out.append(k)
        k *= 2
    return out


def ladder(*, cores: int, hw_threads: int, profile: str, best: int | None = None) -> tuple[int, ...]:
    """The thread counts a placement of ``cores`` physical cores (``hw_threads`` hardware threads) measures."""
    if profile == "full":
        return tuple(sorted({*powers_of_two(hw_threads), hw_threads}))
    if cores <= SMALL:
        return tuple(sorted({1, hw_threads}))
    if best:
        return tuple(sorted({min(hw_threads, max(1, k)) for k in (best // 2, best, best * 2)}))
    return tuple(powers_of_two(cores)[-3:])


def placements(t: Topology, profile: str, best: dict[str, int] | None = None) -> tuple[PlacementPlan, ...]:
    """``best``: the best known thread count per placement label (``fusegate threads``), when there is one."""
    best = best or {}
    small = t.physical_cores() <= SMALL
    rounds = {
        "hot_rounds": HOT_ROUNDS_SMALL if small else HOT_ROUNDS,
        "paired_rounds": PAIRED_ROUNDS_SMALL if small else PAIRED_ROUNDS_LARGE,
    }
    if len(t.nodes) == 1:
        cpus = t.cpus
        return (
            PlacementPlan(
                label="",
                cpus=cpus,
                mem="default",
                **rounds,
                threads=ladder(
                    cores=t.physical_cores(cpus), hw_threads=len(cpus), profile=profile, best=best.get("")
                ),
            ),
        )
    first = min(t.nodes)
    node = t.nodes[first]
    every = ",".join(str(n) for n in sorted(t.nodes))
    return (
        PlacementPlan(
            label=f"node{first}",
            cpus=node,
            mem=f"bind:{first}",
            **rounds,
            threads=ladder(
                cores=t.physical_cores(node),
                hw_threads=len(node),
                profile=profile,
                best=best.get(f"node{first}"),
            ),
        ),
        PlacementPlan(
            label="interleaved",
            cpus=t.cpus,
            mem=f"interleave:{every}",
            **rounds,
            threads=ladder(
                cores=t.physical_cores(),
                hw_threads=len(t.cpus),
                profile=profile,
                best=best.get("interleaved"),
            ),
        ),
    )


@dataclass(frozen=True, kw_only=True)
class Grid:
    """What a profile measures of the declared subject: per task its fused implementations (every one but the
    reference) and those paired with the baseline, the tasks with a collector env, and the scales."""

    fused: dict[str, tuple[str, ...]]  # task -> its implementations but the reference
    paired: dict[str, tuple[str, ...]]  # task -> its implementations the profile pairs with the baseline
    collected: tuple[str, ...]  # the tasks with a collector env (the collector's suites)
    scales: tuple[int, ...]


def grid(profile: str, at: Path | str | None = None) -> Grid:
    """The grid of ``profile`` of the subject the tree at ``at`` declares (default ``gate.meter.subject.root``)."""
    registry, declared = subject.registry(at), subject.declaration(at)
    wanted = declared.profile(profile)
    fused = {t: tuple(i for i in registry.available(t) if i != registry.reference(t)) for t in registry.tasks}
    return Grid(
        fused=fused,
        paired={
            t: tuple(i for i in wanted.paired if i in impls and i != declared.baseline)
            for t, impls in fused.items()
        },
        collected=tuple(t for t in registry.tasks if registry.spec(t).env is not None),
        scales=wanted.scales,
    )


def cells(p: PlacementPlan, g: Grid) -> dict[str, int]:
    """Cells of each suite at one placement (the reference is timed at one scale and thread count)."""
    tasks, scales = len(g.fused), len(g.scales)
    fused = sum(map(len, g.fused.values()))
    collected = sum(len(g.fused[t]) for t in g.collected)  # the fused implementations with a collector
    timed = fused * scales * len(p.threads) + tasks
    return {
        "hot_slice.HotSlice": timed,
        "hot_slice.Paired": sum(map(len, g.paired.values())) * scales * len(p.threads),
        "cost.Cost": fused * scales + tasks + collected,
        "collector.CollectorCheck": collected + len(g.collected),
        "collector.CollectorPaired": sum(len(g.paired[t]) for t in g.collected),
        "hot_slice.AgainstBase": timed,
        "collector.CollectorAgainstBase": collected,
    }


def make(
    t: Topology,
    profile: str = "quick",
    *,
    best: dict[str, int] | None = None,
    per_cell_s: dict[str, float] | None = None,
    head: bool = True,
    at: Path | str | None = None,
) -> Plan:
    """The plan of ``profile`` on ``t`` for the subject the tree at ``at`` declares (``grid``); the estimate from
    ``per_cell_s`` (default ``PER_CELL_S``), of a head (its lockstep pass against the base included) or, with
    ``head=False``, of a base."""
    if profile not in PROFILES:
        raise ValueError(f"unknown profile {profile!r}: quick or full")
    chosen = placements(t, profile, best)
    g = grid(profile, at)
    scales = g.scales
    total: dict[str, int] = {}
    estimate = 0.0
    seconds = {**PER_CELL_S, **(per_cell_s or {})}
    processes = {"hot_slice.HotSlice": "hot_rounds", "hot_slice.Paired": "paired_rounds"}
    for k, p in enumerate(chosen):
        for suite, n in cells(p, g).items():
            if k == 0 or suite not in ONCE:
                total[suite] = total.get(suite, 0) + n
                if (head or "AgainstBase" not in suite) and (k == 0 or suite not in REUSED):
                    per = getattr(p, processes[suite]) if suite in processes else 1
                    if head and suite == "hot_slice.HotSlice":
                        per = min(
                            per, HEAD_HOT_ROUNDS
                        )  # a head's raw times only inform: its lockstep decides
                    estimate += seconds[suite] * n * per
    return Plan(
        profile=profile,
        topology=t,
        placements=chosen,
        scales=scales,
        cells=total,
        estimated_s=estimate,
        head=head,
    )
