"""asv suite: the deterministic cost of ``update_state`` per hot-slice cell at 1 thread, under callgrind.

``setup_cache`` measures every (task, implementation, num_envs) of the profile in one valgrind process
(``gate.meter.cost``): per call, instructions, L1 and last-level misses of a fixed simulated cache, and estimated
cycles. The tracks read that one measurement, so ``asv continuous`` and ``asv publish`` show each metric with
its unit, and the whole measurement goes to the sidecar (``cost.jsonl``) with the valgrind version.

``CollectorCost`` reads the same measurement for the collector cells (``benchmarks/collector.py``'s grid at 1
thread): one collector step of each implementation, everything but MuJoCo's physics (``gate.meter.cost``).

Cost is exact where wall time is not (two processes of one commit agree to 0.01% here), so the quick profile
records it by default: the gate decides head vs base on it (``fusegate-policy.toml``: ``cost_metric``,
``cost_margin``). Without valgrind every cell fails with the install command, never a silent skip.

asv runs every parameter combination of every track in a process of its own (~1 s each, importing NumPy and
Numba to look a number up), so the quick profile tracks instructions only: 22 processes instead of 88. The gate
reads all four metrics of every cell from the pass's sidecar record; ``FUSEGATE_BENCH_TRACKS=1`` (the full
profile) shows the others in asv too. A task's reference is measured at ``REFERENCE_ENVS`` only, as it is timed.
"""

from __future__ import annotations

from benchmarks import _common as common
from benchmarks.collector import GATE_ENVS
from gate.meter import cost

COST_THREADS = [1]  # callgrind runs one thread: parallel overheads show only in time
SUITES = {cost.UPDATE_STATE: "cost", cost.COLLECTOR: "collector_cost"}  # the failure records' suite per kind


def _failure(c: cost.Cell | dict, message: str) -> None:
    c = c if isinstance(c, dict) else c.__dict__
    common.write_failure(c["task"], c["impl"], c["num_envs"], 1, message, suite=SUITES[c["kind"]])


def _measure() -> dict:
    """Every hot-slice and collector cell of the profile in one cost pass; both classes read it (asv keys a
    ``setup_cache`` by its function, so they share one)."""
    cells = [
        cost.Cell(task=task, impl=impl, num_envs=n, kind=kind)
        for task in common.TASKS
        for impl in common.available(task)
        if impl in common.IMPLS
        for kind, scales in ((cost.UPDATE_STATE, common.NUM_ENVS), (cost.COLLECTOR, GATE_ENVS))
        if kind == cost.UPDATE_STATE
        or (
            impl != common.reference(task) and common.collects(task)
        )  # no gate row reads a reference step's cost
        for n in scales
        if impl != common.reference(task) or n == common.REFERENCE_ENVS  # as timed: one scale
    ]
    # callgrind's cache simulation roughly doubles its time; the quick profile runs it only when the policy
    # decides on a cache metric (the full profile always: it shows every metric)
    cache_sim = common.TRACKS or common.policy_value("cost_metric", "instructions") != "instructions"
    # exact and determined by a kernel's sources, the driver and the software: each implementation's cells are
    # stored under its own id (``_common.implementation_id``), so a commit that changes none of its sources (docs,
    # the gate, another implementation's module) reuses them from one measured on this machine, and one pass
    # measures the rest
    groups: dict[tuple[str, str], list[cost.Cell]] = {}
    for c in cells:
        groups.setdefault((c.task, c.impl), []).append(c)
    stored = {
        key: common.Stored(
            "cost",
            {"cells": [c.__dict__ for c in group], "cache_sim": cache_sim, "calls": cost.CALLS},
            subject=common.implementation_id(*key),
        )
        for key, group in groups.items()
    }
    found = {key: s.load() for key, s in stored.items()}
    reused = sorted(f"{task}/{impl}" for (task, impl), hit in found.items() if hit is not None)
    missing = [c for key, group in groups.items() if found[key] is None for c in group]
    measured = None
    if missing:
        try:
            measured = cost.measure(missing, cache_sim=cache_sim)
        except cost.CostError as exc:
            for c in cells:  # the gate's rows name it (asv keeps no exception text)
                _failure(c, str(exc))
            return {"error": str(exc)}
        by_cell = {(c["kind"], c["task"], c["impl"], c["num_envs"]): c for c in measured["cells"]}
        for key, group in groups.items():
            if found[key] is None:
                found[key] = {
                    **measured,
                    "cells": [by_cell[(c.kind, c.task, c.impl, c.num_envs)] for c in group],
                }
                if not any(c["error"] for c in found[key]["cells"]):
                    stored[key].save(found[key])
    result = {
        **(measured or next(iter(found.values()), {})),
        "cells": [c for key in groups for c in found[key]["cells"]],
        "reused": not missing,
        "reused_kernels": reused,
    }
    common.write_sidecar("cost", {"cost": result})
    for c in result["cells"]:
        if c["error"]:
            _failure(c, f"under callgrind: {c['error']}")
    return {(c["kind"], c["task"], c["impl"], c["num_envs"]): c for c in result["cells"]}


class Cost:
    params = (common.TASKS, common.IMPLS, common.NUM_ENVS, COST_THREADS)
    param_names = ("task", "impl", "num_envs", "threads")
    timeout = 1800
    rounds = 1  # exact: one measurement per commit
    kind = cost.UPDATE_STATE
    setup_cache = staticmethod(_measure)

    def setup(self, costs, task, impl, num_envs, threads):
        if impl not in common.available(task):
            raise NotImplementedError(f"{impl} has no {task} kernel")
        if "error" in costs:
            raise RuntimeError(costs["error"])
        if (self.kind, task, impl, num_envs) not in costs:
            raise NotImplementedError(f"{task}/{impl} at {num_envs} envs is not in the profile's cost pass")
        cell = costs[(self.kind, task, impl, num_envs)]
        if cell["error"]:
            raise RuntimeError(
                f"{cell['kind']} of {task}/{impl} at {num_envs} envs under callgrind: {cell['error']}"
            )
        self.cell = cell

    def track_instructions(self, costs, task, impl, num_envs, threads):
        """Instructions executed per ``update_state`` call (callgrind's Ir)."""
        return self.cell["instructions"]

    track_instructions.unit = "instructions"

    if common.TRACKS:  # the gate reads every metric from the sidecar; asv shows these in the full profile

        def track_l1_misses(self, costs, task, impl, num_envs, threads):
            """Simulated L1 misses (instruction and data) per call."""
            return self.cell["l1_misses"]

        track_l1_misses.unit = "misses"

        def track_ll_misses(self, costs, task, impl, num_envs, threads):
            """Simulated last-level misses per call."""
            return self.cell["ll_misses"]

        track_ll_misses.unit = "misses"

        def track_estimated_cycles(self, costs, task, impl, num_envs, threads):
            """L1 hits + 5 x LL hits + 35 x RAM accesses per call (``gate.meter.cost``)."""
            return self.cell["estimated_cycles"]

        track_estimated_cycles.unit = "cycles"


class CollectorCost(Cost):
    """Per collector step of ``num_envs`` envs, everything but physics (``gate.meter.cost``)."""

    params = (common.TASKS, [i for i in common.IMPLS if not common.is_reference(i)], GATE_ENVS, COST_THREADS)
    kind = cost.COLLECTOR
