"""Two commits timed in lockstep: a worker process per commit, samples alternated milliseconds apart.

On a shared VM the machine's speed changes for minutes at a time (an unchanged 2-thread kernel measured 1.6-2.5x
slower half an hour after its base), so two commits timed at different moments cannot be compared. Here each
side is a long-lived worker process that imports its own tree (its commit's subject, the base's meter): both
load the same cell (task, implementation, envs, threads) on the same synthetic snapshot laid out at the same
cache-line offsets, and the coordinator asks them for one timed sample at a time, in random order within each
pair, so whatever the machine does in a given second it does to both. Two processes share the cores, so their
OpenMP threads spin only briefly before they sleep (``GOMP_SPINCOUNT=30000``, then passive): with libgomp's default
spin an idle worker took the cores of the measuring one and made 2-thread samples jump between 0.5 and 16 ms on 2
vCPUs, while sleeping at once made every call of a small kernel pay a thread wake-up (pair medians of an A/A at
256 envs, 2 threads, spread 0.74-1.52 instead of 0.89-1.06). Both sides run the same policy. Each sample starts
with an untimed call (it wakes the worker's threads; an idle vCPU takes milliseconds to wake), and ``SETTLE_S``
separates samples, longer than the spin. A cell of fewer threads than CPUs runs both workers on the same
randomly chosen CPUs: this VM's vCPUs differ in speed for minutes at a time (1-thread pair medians of an A/A
spread 0.55-1.53 unpinned, 0.92-1.06 pinned).

Each worker applies the environment's placement (``gate.meter.placement``) before it allocates, and replies
with its own clock: the coordinator's pipe and scheduling are never in a sample.

    worker:       python -m gate.meter.duet   (in a tree: its kernels, its meter), JSON lines on stdin/stdout; each
                  side's python its own (a head that changes the dependency pins: an environment of them)
    coordinator:  Duet(head_tree, base_tree) -> pairs(cell, n) -> [(head_s, base_s, first), ...]

The kinds of cell: ``update_state`` (one call of the kernel) and ``collector`` (one collector step).
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

from gate import provenance

SETTLE_S = 0.003  # between samples: longer than an idle worker's OpenMP threads spin (GOMP_SPINCOUNT)
MIN_SAMPLE_S = (
    0.005  # a sample lasts at least this long (calls are repeated): timer and call overheads vanish
)
UPDATE_STATE, COLLECTOR = "update_state", "collector"


@dataclass(frozen=True, kw_only=True)
class Cell:
    task: str
    impl: str
    num_envs: int
    threads: int
    kind: str = UPDATE_STATE

    def label(self) -> str:
        return f"{self.kind}:{self.task}/{self.impl}/{self.num_envs}/{self.threads}"


class DuetError(RuntimeError):
    """A worker that failed: which side, what it said."""


# --- the worker -------------------------------------------------------------------------------------------------


class _Worker:
    def __init__(self) -> None:
        import importlib

        import gate.meter
        from gate.meter import subject
        from gate.meter.placement import Placement

        tree = Path.cwd().resolve()
        allowed = [Path(p) for p in provenance.import_path(tree)]  # a team's tree: the running fusegate's too
        tasks = importlib.import_module(subject.declaration().tasks)
        for module in (tasks, gate.meter):  # an installed copy must never stand in for the tree's own code
            where = Path(module.__file__).resolve()
            if not any(where.is_relative_to(p) for p in allowed):
                raise DuetError(f"{module.__name__} came from {where.parent}, not from the tree {tree}")
        self.applied = Placement.from_env().apply()  # before any array exists
        self.call = None
        self.inputs: dict[
            tuple[str, int], dict
        ] = {}  # synthetic snapshots made so far (32768 envs: ~1 s each)

    def load(self, cell: Cell, layout_seed: int, cpus: list[int] | None = None) -> dict:
        import numba
        import numpy as np

        if cpus:  # the same CPUs as the other worker's: vCPUs of a VM differ in speed, for minutes at a time
            os.sched_setaffinity(0, cpus)

        from gate.meter import subject
        from gate.meter.placement import first_touch
        from gate.meter.subject import make_inputs

        numba.set_num_threads(cell.threads)
        if cell.kind == COLLECTOR:
            from kernels.sim.collector import Collector

            collector = Collector(cell.task, cell.impl, num_envs=cell.num_envs, threads=cell.threads, seed=0)
            collector.threads_limited().__enter__()  # for the worker's life: it measures nothing else

            def step() -> None:
                collector.step()

            self.call = step
        else:
            key = (cell.task, cell.num_envs)
            if key not in self.inputs:
                self.inputs[key] = make_inputs(cell.task, cell.num_envs, 0)
            snap = first_touch(self.inputs[key], rng=np.random.default_rng(layout_seed))
            kernel = subject.registry().load(
                cell.task, cell.impl, num_envs=cell.num_envs, threads=cell.threads
            )
            self.call = lambda: kernel.update_state(snap)
        t0 = time.perf_counter()
        self.call()  # Numba's cache load, first touch of the outputs
        first = time.perf_counter() - t0
        t0 = time.perf_counter()
        self.call()
        return {"first_s": first, "one_s": time.perf_counter() - t0}

    def sample(self, loops: int, warm: int = 1) -> dict:
        """``loops`` timed calls after ``warm`` untimed ones: the untimed call wakes this process's threads (an
        idle vCPU takes milliseconds to wake on a VM) while the other worker's stop spinning."""
        for _ in range(warm):
            self.call()
        t0 = time.perf_counter()
        for _ in range(loops):
            self.call()
        return {"s": (time.perf_counter() - t0) / loops}


def worker_main() -> int:
    """Serve the coordinator: one JSON request per line on stdin, one JSON reply per line on stdout."""
    out = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # anything else printed (Numba's warnings) goes to stderr, not into the replies
    worker = None
    for line in sys.stdin:
        request = json.loads(line)
        try:
            if worker is None:
                worker = _Worker()
            if request["op"] == "load":
                reply = worker.load(Cell(**request["cell"]), request["layout_seed"], request.get("cpus"))
            elif request["op"] == "sample":
                reply = worker.sample(int(request["loops"]), int(request.get("warm", 1)))
            elif request["op"] == "quit":
                return 0
            else:
                reply = {"error": f"unknown op {request['op']!r}"}
        except Exception as exc:  # the coordinator names the side and the cell
            reply = {"error": f"{type(exc).__name__}: {exc}"}
        out.write(json.dumps(reply) + "\n")
    return 0


# --- the coordinator --------------------------------------------------------------------------------------------


class _Side:
    def __init__(self, name: str, tree: Path, env: dict, python: str | None = None):
        from gate.meter import subject

        self.name, self.tree = name, Path(tree)
        self.proc = subprocess.Popen(
            [python or sys.executable, "-m", "gate.meter.duet"],
            cwd=self.tree,
            env={
                **env,
                "PYTHONPATH": os.pathsep.join(provenance.import_path(self.tree)),
                subject.VARIABLE: str(self.tree),
            },
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            bufsize=1,
        )

    def ask(self, request: dict) -> dict:
        try:
            self.proc.stdin.write(json.dumps(request) + "\n")
            self.proc.stdin.flush()
            line = self.proc.stdout.readline()
        except (BrokenPipeError, OSError):
            line = ""
        if not line:
            err = self.proc.stderr.read()[-1500:] if self.proc.poll() is not None else ""
            raise DuetError(f"the {self.name} worker ({self.tree}) stopped: {err.strip() or 'no message'}")
        reply = json.loads(line)
        if "error" in reply:
            raise DuetError(f"the {self.name} worker ({self.tree}): {reply['error']}")
        return reply

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.proc.stdin.write(json.dumps({"op": "quit"}) + "\n")
                self.proc.stdin.flush()
                self.proc.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()


@dataclass(frozen=True, kw_only=True)
class Pair:
    head_s: float
    base_s: float
    first: str  # "head" or "base": which ran first in the pair

    def to_dict(self) -> dict:
        return asdict(self)


class Duet:
    """A head worker and a base worker, each importing its own tree on its own interpreter (``pythons``: side ->
    executable; default this one); ``pairs`` alternates their samples."""

    def __init__(
        self,
        head_tree: Path,
        base_tree: Path,
        *,
        env: dict | None = None,
        seed: int | None = None,
        pin: bool = True,
        pythons: dict[str, str | None] | None = None,
    ):
        self.pin = pin
        env = {
            "OMP_WAIT_POLICY": "PASSIVE",
            "GOMP_SPINCOUNT": "30000",
            **{k: v for k, v in (env or os.environ).items() if k != "PYTHONPATH"},
        }
        pythons = pythons or {}
        self.sides = {
            "head": _Side("head", head_tree, env, pythons.get("head")),
            "base": _Side("base", base_tree, env, pythons.get("base")),
        }
        self.rng = random.Random(seed)

    def __enter__(self) -> Duet:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        for side in self.sides.values():
            side.close()

    def load(self, cell: Cell) -> dict[str, int]:
        """Both sides load ``cell`` on one layout and, for a cell of fewer threads than CPUs, on the same randomly
        chosen CPUs; returns the loops per sample of each (>= MIN_SAMPLE_S)."""
        layout = self.rng.randrange(2**31)
        allowed = sorted(os.sched_getaffinity(0))
        cpus = (
            sorted(self.rng.sample(allowed, cell.threads))
            if self.pin and cell.threads < len(allowed)
            else None
        )
        replies = {
            name: side.ask({"op": "load", "cell": asdict(cell), "layout_seed": layout, "cpus": cpus})
            for name, side in self.sides.items()
        }
        slowest = max(r["one_s"] for r in replies.values())
        loops = max(1, int(MIN_SAMPLE_S / max(slowest, 1e-9)) + 1)
        return {name: loops for name in self.sides}  # the same count: the same work in each sample

    def pairs(self, cell: Cell, count: int, *, warmup: int = 2) -> list[Pair]:
        """``count`` pairs of one sample per side, in random order within each pair, after ``warmup`` pairs."""
        loops = self.load(cell)
        warm = 0 if cell.kind == COLLECTOR else 1  # a collector step is tens of ms: nothing to wake for
        out = []
        for k in range(warmup + count):
            order = ["head", "base"]
            self.rng.shuffle(order)
            got = {}
            for name in order:
                time.sleep(SETTLE_S)
                got[name] = self.sides[name].ask({"op": "sample", "loops": loops[name], "warm": warm})["s"]
            if k >= warmup:
                out.append(Pair(head_s=got["head"], base_s=got["base"], first=order[0]))
        return out

    def alone(self, side: str, cell: Cell, count: int, *, warmup: int = 2) -> list[float]:
        """``count`` samples of one side only (the design the duet replaces: each commit timed on its own)."""
        loops = self.load(cell)[side]
        samples = []
        for k in range(warmup + count):
            s = self.sides[side].ask({"op": "sample", "loops": loops})["s"]
            if k >= warmup:
                samples.append(s)
        return samples


def in_question(groups: list[list[float]] | None, margin: float) -> bool:
    """Whether a cell's lockstep time questions the head: the median over its worker pairs of each pair's median
    head/base ratio is above ``1 + margin``. Such a cell gets more worker pairs in the same pass (more groups for
    its hierarchical bootstrap, so a real slowdown reaches the false-discovery threshold without rounds); a cell
    at or below it is decided by what it has (a pass, or the cost signal when its interval straddles)."""
    import statistics

    medians = [statistics.median(g) for g in groups or () if g]
    return bool(medians) and statistics.median(medians) > 1 + margin


def cells(tasks, impls, scales, threads, kind: str = UPDATE_STATE) -> Iterator[Cell]:
    for task in tasks:
        for impl in impls:
            for n in scales:
                for t in threads:
                    yield Cell(task=task, impl=impl, num_envs=n, threads=t, kind=kind)


if __name__ == "__main__":
    raise SystemExit(worker_main())
