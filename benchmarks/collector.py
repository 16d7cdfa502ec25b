"""asv suite: the end-to-end collector (MuJoCo G1 physics, getters, update_state, reset, policy, replay) per
task x implementation x num_envs, under the same placement as the hot slice.

In every profile (the gate judges these; ``CollectorPaired`` is measured for the gate and in the full profile,
not when asv runs the suites alone, as ``Paired``):

- ``CollectorCheck``: one process (``setup_cache``) rolls out every implementation's collector for
  ``CHECK_STEPS`` steps on seed 0 (episodes end and reset within them) and checks it against its task's
  reference (``gate.meter.trajectory``): at every step the reference evaluated on the same snapshot (open
  loop, the kernel parity tolerances), and the reference's own rollout over the first steps (closed loop). A collector that fails to construct, raises in a step or departs from
  the reference fails its benchmark, and the exception or the departure goes to the sidecar (``failure``,
  suite ``collector``) for the gate's correctness row. ``track_reward_max_diff`` is the largest reward
  difference from the reference's rollout over the closed-loop steps.
- ``CollectorPaired``: each paired implementation against the baseline in one process: two collectors
  on the same seed, so on the same states, stepped in alternating blocks of ``BLOCK`` steps in random order,
  ``PAIRS`` pairs after ``PAIR_WARMUP`` steps each. Every pair (step time of each side, and physics, the kernel and
  the rest per env-step) goes to the sidecar (``collector_paired``); asv tracks the median pair ratio.
  ``rounds`` processes per cell, like the hot slice's ``Paired``.

- ``CollectorAgainstBase``: the head's collector step against the base's, per implementation, in lockstep in two
  worker processes, one per tree (``gate.meter.duet``): the gate's collector_head_vs_base time. Only for a head
  whose base tree ``fusegate gate --measure`` names.

Every task with a collector env (its spec's ``env``); a task without one has no collector cells.
Grid: ``GATE_ENVS`` (quick: 64 envs, a step of ~30 ms at 1 thread here; full: 256 and 1024) at ``GATE_THREADS``
(quick: 1 thread, the quiet cells on a shared machine; full: the profile's thread counts);
``FUSEGATE_BENCH_COLLECTOR_ENVS`` overrides the scales. The collector step's cost under callgrind is
``cost.CollectorCost``.

The phase tracks: one process (``setup_cache``) runs every case in turn with ``kernels.sim.collector.Collector`` at the
placement's full thread count, and every ``track_`` looks its number up: the step time, env-steps/s (as its
inverse, microseconds per env-step, so asv's "higher is worse" holds), each phase in microseconds per env-step,
the overhead (everything but physics and the policy forward pass) and CPU utilisation. Each report also goes
to the sidecar (kind ``collector``). Like the other ``track_`` suites it exists when ``FUSEGATE_BENCH_TRACKS=1``
(the full profile's default): one value per process, which ``asv continuous`` compares without statistics.

Profiles: ``quick`` runs 256 envs for 30 steps after 5 of warm-up; ``full`` runs 1024 and 4096 envs for 100
steps after 10.
"""

from __future__ import annotations

import random
import statistics

import numpy as np

from benchmarks import _common as common

NUM_ENVS = [256] if common.PROFILE == "quick" else [1024, 4096]
STEPS, WARMUP = (30, 5) if common.PROFILE == "quick" else (100, 10)

GATE_ENVS = common.axis("collector_envs", [64] if common.PROFILE == "quick" else [256, 1024])
GATE_THREADS = [1] if common.PROFILE == "quick" else common.THREADS
CHECK_STEPS = 16  # this repository's tasks end episodes of 64 envs from the 6th step on (seed 0)
TASKS = [t for t in common.TASKS if common.collects(t)]  # the tasks with a collector env
PAIRS, BLOCK, PAIR_WARMUP = 12, 2, 2
SUITE = "collector"  # the failure records' suite: the gate names the module, not the benchmark


def _failure(task: str, impl: str, num_envs: int, threads: int, message: str) -> None:
    """The sidecar's failure record of a collector cell, ending with the command that reproduces it."""
    again = (
        f"; reproduce: fusegate collect --check --task {task} --impl {impl} --num-envs {num_envs} "
        f"--threads {threads} --steps {CHECK_STEPS}"
    )
    common.write_failure(task, impl, num_envs, threads, message, suite=SUITE, tail=again)


def _check_all() -> dict:
    from gate.meter import trajectory

    common.place()
    found = {}
    for task in TASKS:
        impls = [i for i in common.available(task) if i in common.IMPLS]
        for n in GATE_ENVS:
            for t in GATE_THREADS:
                checks = trajectory.check(task, impls, steps=CHECK_STEPS, num_envs=n, seed=0, threads=t)
                common.write_sidecar(
                    "collector_check",
                    {
                        "task": task,
                        "num_envs": n,
                        "threads": t,
                        "steps": CHECK_STEPS,
                        "checks": [c.to_dict() for c in checks.values()],
                    },
                )
                for impl, c in checks.items():
                    if not c.ok:
                        _failure(task, impl, n, t, c.message)
                    found[(task, impl, n, t)] = c.to_dict()
    return found


class CollectorCheck:
    params = (TASKS, common.IMPLS, GATE_ENVS, GATE_THREADS)
    param_names = ("task", "impl", "num_envs", "threads")
    timeout = 900
    rounds = 1  # a fixed-seed rollout: one per commit

    def setup_cache(self):
        return _check_all()

    def setup(self, checks, task, impl, num_envs, threads):
        common.require(task, impl, threads)
        found = checks[(task, impl, num_envs, threads)]
        if not found["ok"]:
            raise RuntimeError(found["message"])

    def track_reward_max_diff(self, checks, task, impl, num_envs, threads):
        """Largest reward difference from the reference's rollout (same seed, same steps)."""
        return checks[(task, impl, num_envs, threads)]["max_reward_diff"]

    track_reward_max_diff.unit = "reward"


DUET_PAIRS = 12  # collector steps are ~30 ms at 64 envs: fewer pairs than the hot slice's


def _against_base() -> dict:
    """The lockstep pass over the collector grid (``_common.duet_pass``); {} without a base tree."""
    from gate.meter.duet import COLLECTOR, Cell

    if not common.AGAINST:
        return {}
    cells = [
        Cell(task=task, impl=impl, num_envs=n, threads=t, kind=COLLECTOR)
        for task in TASKS
        for impl in common.available(task)
        if impl in common.HEAD_VS_BASE and impl != common.reference(task)
        for n in GATE_ENVS
        for t in GATE_THREADS
    ]
    return common.duet_pass("collector_against_base", cells, pairs=DUET_PAIRS)


class CollectorAgainstBase:
    """Each implementation's collector step on the head against the base's, in lockstep (``gate.meter.duet``)."""

    params = (TASKS, common.IMPLS, GATE_ENVS, GATE_THREADS)
    param_names = ("task", "impl", "num_envs", "threads")
    timeout = 1800
    rounds = 1
    setup_cache = staticmethod(_against_base)

    def setup(self, found, task, impl, num_envs, threads):
        if not common.AGAINST:
            raise NotImplementedError("no base to time against (fusegate gate --measure names one)")
        key = (task, impl, num_envs, threads)
        if key not in found:
            raise NotImplementedError(
                "not timed in lockstep: not in the pass's grid, or its sources are the base's"
            )
        if isinstance(found[key], str):
            raise RuntimeError(found[key])

    def track_ratio(self, found, task, impl, num_envs, threads):
        """Median over the pass's pairs of head step time / base step time (lockstep)."""
        return found[(task, impl, num_envs, threads)]

    track_ratio.unit = "ratio"


def _phases_us(phase_s: np.ndarray, num_envs: int) -> dict[str, float]:
    """Physics, the kernel and the rest of a block's steps (sums of ``Collector.step`` times), per env-step."""
    from kernels.sim.collector import PHASES

    per = dict(zip(PHASES, phase_s[: len(PHASES)] / num_envs * 1e6, strict=True))
    rest = sum(v for k, v in per.items() if k not in ("physics", "update_state"))
    return {"physics": float(per["physics"]), "kernel": float(per["update_state"]), "rest": float(rest)}


if common.PAIRED_TRACKS:  # see benchmarks/_common.py: the gate's, judged with intervals

    class CollectorPaired:
        """A paired implementation's collector step against the baseline's, alternating in one process."""

        params = (
            TASKS,
            common.PAIRED_IMPLS,
            GATE_ENVS,
            GATE_THREADS,
        )
        param_names = ("task", "impl", "num_envs", "threads")
        timeout = 600

        def setup(self, task, impl, num_envs, threads):
            from kernels.sim.collector import Collector

            common.require(task, impl, threads)
            common.record_process("CollectorPaired", task, impl, num_envs, threads)
            self.collectors = {}
            for name in (common.BASELINE, impl):
                try:
                    with common.phase("load"):
                        self.collectors[name] = Collector(
                            task, name, num_envs=num_envs, threads=threads, seed=0
                        )
                except Exception as exc:  # named like the check's message (the gate shows either)
                    call = f"Collector({task!r}, {name!r}, num_envs={num_envs}, threads={threads})"
                    _failure(task, impl, num_envs, threads, f"{call} raised {type(exc).__name__}: {exc}")
                    raise

        def teardown(self, task, impl, num_envs, threads):
            common.flush_process()

        def _block(self, name: str, times: np.ndarray) -> tuple[float, np.ndarray]:
            """``BLOCK`` steps of one collector: their mean wall time, timed here, and its own phase account."""
            from gate.meter.collect import timed_step

            collector, phases = self.collectors[name], np.zeros(times.shape)
            wall = 0.0
            for _ in range(BLOCK):
                wall += timed_step(collector, times)
                phases += times
            return wall / BLOCK, phases / BLOCK

        def track_ratio(self, task, impl, num_envs, threads):
            """Median over PAIRS pairs of impl / baseline step time, each pair of blocks in random order."""
            from kernels.sim.collector import PHASES, PHYSICS_PARTS

            base = self.collectors[common.BASELINE]
            times = np.zeros(len(PHASES) + len(PHYSICS_PARTS))
            rng, pairs = random.Random(), []
            with base.threads_limited():  # both collectors run at the same thread counts
                for name in (common.BASELINE, impl):
                    for _ in range(PAIR_WARMUP):
                        self.collectors[name].step()
                for _ in range(PAIRS):
                    order = [common.BASELINE, impl]
                    rng.shuffle(order)
                    blocks = {name: self._block(name, times) for name in order}
                    pairs.append(
                        {
                            "base_s": blocks[common.BASELINE][0],
                            "impl_s": blocks[impl][0],
                            "first": order[0],
                            "base_us": _phases_us(blocks[common.BASELINE][1], num_envs),
                            "impl_us": _phases_us(blocks[impl][1], num_envs),
                        }
                    )
            ratio = statistics.median(p["impl_s"] / p["base_s"] for p in pairs)
            common.write_sidecar(
                "collector_paired",
                {
                    "task": task,
                    "impl": impl,
                    "baseline": common.BASELINE,
                    "num_envs": num_envs,
                    "threads": threads,
                    "block": BLOCK,
                    "pairs": pairs,
                    "median_ratio": ratio,
                },
            )
            return ratio

        track_ratio.unit = "ratio"


def _measure() -> dict:
    from gate.meter import collect
    from kernels.sim.collector import Collector

    applied = common.place()
    reports = {}
    for task in TASKS:
        for impl in common.available(task):
            for n in NUM_ENVS:
                collector = Collector(task, impl, num_envs=n, threads=applied.threads)
                report = collect.run(collector, STEPS, warmup=WARMUP).to_dict()
                del collector  # its batch of N MjData goes before the next one is built
                reports[(task, impl, n)] = report
                common.write_sidecar("collector", {"report": report})
    return reports


if common.TRACKS:  # see benchmarks/_common.py

    class Collector:
        params = (TASKS, common.IMPLS, NUM_ENVS)
        param_names = ("task", "impl", "num_envs")
        timeout = 3600

        def setup_cache(self):
            return _measure()

        def setup(self, reports, task, impl, num_envs):
            if (task, impl, num_envs) not in reports:
                raise NotImplementedError(f"{impl} has no {task} kernel")

        def track_step_ms(self, reports, task, impl, num_envs):
            """Median wall time of one control step of every env."""
            return reports[(task, impl, num_envs)]["step_ms"]["median"]

        track_step_ms.unit = "ms"

        def track_us_per_env_step(self, reports, task, impl, num_envs):
            """1e6 / env-steps per second."""
            return 1e6 / reports[(task, impl, num_envs)]["env_steps_per_s"]

        track_us_per_env_step.unit = "us"

        def track_overhead_us(self, reports, task, impl, num_envs):
            """getters + update_state + reset + replay + other, per env-step."""
            return reports[(task, impl, num_envs)]["overhead_us_per_env_step"]

        track_overhead_us.unit = "us"

        def track_cpu_util(self, reports, task, impl, num_envs):
            return reports[(task, impl, num_envs)]["cpu_util"]

        track_cpu_util.unit = "cores"

    def _phase_track(phase: str):
        def track(self, reports, task, impl, num_envs):
            return reports[(task, impl, num_envs)]["us_per_env_step"][phase]

        track.__name__ = f"track_{phase}_us"
        track.__doc__ = f"The {phase} phase, microseconds per env-step."
        track.unit = "us"
        return track

    for _phase in ("physics", "getters", "update_state", "reset", "action", "replay", "other"):
        setattr(Collector, f"track_{_phase}_us", _phase_track(_phase))
