"""asv suite: the update_state hot slice alone, per task x implementation x num_envs x threads.

- ``HotSlice.time_update_state``: steady-state time of one call (JIT warm, parity checked first).
- ``HotSliceMetrics``: achieved bandwidth against a parallel copy of the same bytes (as a time ratio, lower is
  better, so asv's "higher is worse" holds) and CPU utilisation, from one interleaved in-process run.
- ``JIT``: compile time (empty cache) and cache-load time, each in fresh processes.
- ``Paired``: every other implementation timed alternately with the baseline in one process, in random order,
  every pair kept in the sidecar for the gate; asv tracks the median pair ratio. The gate's headline measurement:
  measured for the gate (``FUSEGATE_BENCH_GATE=1``) and in the full profile, left out when asv runs the suites
  alone (one value per process is not what its rule can judge; ``benchmarks/_common.py``).

- ``AgainstBase``: the head's implementations against the base's, in lockstep in two worker processes, one per
  tree (``gate.meter.duet``): the gate's head_vs_base time, immune to the machine's slow phases. Measured only
  for a head whose base tree ``fusegate gate --measure`` names (``FUSEGATE_BENCH_AGAINST``).

``HotSliceMetrics`` and ``JIT`` exist when ``FUSEGATE_BENCH_TRACKS=1`` (the default of the full profile).
"""

from __future__ import annotations

import random
import statistics
import time

import numpy as np

from benchmarks import _common as common
from gate.meter import bench

_BUILT: dict[tuple, tuple] = {}  # (task, impl, num_envs, threads) -> (snapshot, kernel), per process


class HotSlice:
    params = (common.TASKS, common.IMPLS, common.NUM_ENVS, common.THREADS)
    param_names = ("task", "impl", "num_envs", "threads")
    timeout = 600
    # Many short processes: this VM runs at one of two speeds for seconds at a time, so a
    # process mostly sees one; six of them per cell sample the machine where three long ones could not.
    # 6 unless a plan sets FUSEGATE_BENCH_HOT_ROUNDS; 2 for a head in lockstep; 8 when asv runs the suites alone
    rounds = common.HOT_ROUNDS
    # A fixed count per process: asv concatenates the samples of its rounds (processes) in order, so the gate
    # can split them back into one group per process (gate/ingest/bundle.py) for its hierarchical bootstrap;
    # for asv alone one sample, the mean over ``sample_time`` of calls, as its rule takes samples as independent.
    repeat = common.HOT_REPEAT
    sample_time = 0.01 if common.GATE else common.ASV_SAMPLE_S
    warmup_time = 0.05  # setup already called the kernel (its load); a process is warm by its first sample
    setup_cache = staticmethod(common.check_parity)  # shared with Paired: one parity check per commit

    def setup(self, checked, task, impl, num_envs, threads):
        common.require(task, impl, threads)
        if impl == common.reference(task) and (threads, num_envs) != (
            common.THREADS[0],
            common.REFERENCE_ENVS,
        ):
            raise NotImplementedError(
                f"the reference is single-threaded and scales linearly: timed at {common.THREADS[0]} "
                f"thread(s) and {common.REFERENCE_ENVS} envs"
            )
        # asv_runner re-runs setup (and teardown) before every sample of a timing benchmark (asv#966): the
        # snapshot and the kernel are built once per process and reused, as the steady state they time is.
        key = (task, impl, num_envs, threads)
        if key not in _BUILT:
            common.record_process("HotSlice", *key)
            snap = common.snapshot(task, num_envs, threads)
            _BUILT[key] = (snap, common.checked_kernel(task, impl, num_envs, threads, snap, checked))
        self.snap, self.kernel = _BUILT[key]

    def time_update_state(self, checked, task, impl, num_envs, threads):
        self.kernel.update_state(self.snap)

    def teardown(self, checked, task, impl, num_envs, threads):
        common.flush_process()


if common.TRACKS:  # see benchmarks/_common.py: recorded for the gate, not judged by asv continuous

    class HotSliceMetrics:
        """One process measures the whole grid interleaved (``gate.meter.bench.run_cell``); tracks look it up."""

        params = (common.TASKS, common.IMPLS, common.NUM_ENVS, common.THREADS)
        param_names = ("task", "impl", "num_envs", "threads")
        timeout = 1800

        def setup_cache(self):
            common.place()
            rows = {}
            for task in common.TASKS:
                for n in common.NUM_ENVS:
                    for threads in common.THREADS:
                        cell = bench.run_cell(
                            task=task,
                            impls=common.available(task),
                            num_envs=n,
                            threads=threads,
                            repeats=10,
                            baseline=common.BASELINE,
                        )
                        for row in cell.rows:
                            rows[(task, row["impl"], n, threads)] = row
                        common.write_sidecar("hot_slice_metrics", {"cell": cell.to_dict()})
            return rows

        def setup(self, rows, task, impl, num_envs, threads):
            common.require(task, impl, threads)
            if (task, impl, num_envs, threads) not in rows:
                raise NotImplementedError("not measured")
            if not rows[(task, impl, num_envs, threads)]["parity_ok"]:
                raise RuntimeError(f"{task}/{impl} fails parity with the reference")

        def track_time_vs_copy(self, rows, task, impl, num_envs, threads):
            """Kernel time over a parallel copy of the same bytes: 1 / (fraction of copy bandwidth)."""
            return 100.0 / rows[(task, impl, num_envs, threads)]["pct_of_copy"]

        track_time_vs_copy.unit = "x copy time"

        def track_cpu_util(self, rows, task, impl, num_envs, threads):
            """CPU seconds per wall second while timing (cores busy)."""
            return rows[(task, impl, num_envs, threads)]["cpu_util"]

        track_cpu_util.unit = "cores"

    class JIT:
        params = (common.TASKS, [i for i in common.IMPLS if not common.is_reference(i)])
        param_names = ("task", "impl")
        timeout = 1800

        def setup_cache(self):
            return {
                (task, impl): bench.jit_times(task, impl)
                for task in common.TASKS
                for impl in common.available(task)
                if impl != common.reference(task)
            }

        def setup(self, times, task, impl):
            if (task, impl) not in times:
                raise NotImplementedError(f"{impl} has no {task} kernel")

        def track_compile_s(self, times, task, impl):
            return times[(task, impl)]["compile_s"]

        track_compile_s.unit = "s"

        def track_cache_load_s(self, times, task, impl):
            return times[(task, impl)]["cache_load_s"]

        track_cache_load_s.unit = "s"


if common.PAIRED_TRACKS:  # see benchmarks/_common.py: the gate's, judged with intervals

    class Paired:
        """The gate's headline measurement: a fused implementation vs the baseline, alternating in one process.

        asv runs a track benchmark once per round; ``asv run -a rounds=N`` gives N processes per cell (the gate
        pools them hierarchically). The reference is left out (the grid pairs fused implementations): the NumPy
        reference is 6-20x the hand-written kernel, so its 40 pairs would take most of the suite's time for a
        ratio nobody gates on.
        """

        params = (
            common.TASKS,
            common.PAIRED_IMPLS,
            common.NUM_ENVS,
            common.THREADS,
        )
        param_names = ("task", "impl", "num_envs", "threads")
        timeout = (
            900  # processes per cell: asv run -a rounds=N (gate_asv_runs: 3); asv ignores a track's rounds
        )
        setup_cache = staticmethod(common.check_parity)

        def setup(self, checked, task, impl, num_envs, threads):
            common.require(task, impl, threads)
            common.record_process("Paired", task, impl, num_envs, threads)
            self.snaps = {name: common.snapshot(task, num_envs, threads) for name in (common.BASELINE, impl)}
            self.kernels = {
                name: common.checked_kernel(task, name, num_envs, threads, snap, checked)
                for name, snap in self.snaps.items()
            }

        def teardown(self, checked, task, impl, num_envs, threads):
            common.flush_process()

        def _sample(self, name: str, loops: int) -> float:
            kernel, snap = self.kernels[name], self.snaps[name]
            t0 = time.perf_counter()
            for _ in range(loops):
                kernel.update_state(snap)
            return (time.perf_counter() - t0) / loops

        def track_ratio(self, checked, task, impl, num_envs, threads):
            """Median over >= PAIRS pairs of impl time / baseline time, each pair in random order."""
            # Each sample lasts >= 1 ms, so timer resolution and call overhead stay out of the ratio.
            loops = {
                name: max(1, int(np.ceil(1e-3 / max(self._sample(name, 1), 1e-9)))) for name in self.kernels
            }
            rng = random.Random()
            pairs = []
            for _ in range(common.PAIRS):
                order = [common.BASELINE, impl]
                rng.shuffle(order)
                times = {name: self._sample(name, loops[name]) for name in order}
                pairs.append({"base_s": times[common.BASELINE], "impl_s": times[impl], "first": order[0]})
            ratios = [p["impl_s"] / p["base_s"] for p in pairs]
            common.write_sidecar(
                "paired",
                {
                    "task": task,
                    "impl": impl,
                    "baseline": common.BASELINE,
                    "num_envs": num_envs,
                    "threads": threads,
                    "loops": loops,
                    "pairs": pairs,
                    "median_ratio": statistics.median(ratios),
                },
            )
            return statistics.median(ratios)

        track_ratio.unit = "ratio"


def _against_base() -> dict:
    """The lockstep pass over the hot-slice grid (``_common.duet_pass``); {} without a base tree."""
    from gate.meter.duet import Cell

    if not common.AGAINST:
        return {}
    cells = [
        Cell(task=task, impl=impl, num_envs=n, threads=t)
        for task in common.TASKS
        for impl in common.available(task)
        if impl in common.HEAD_VS_BASE
        for n in common.NUM_ENVS
        for t in common.THREADS
        if impl != common.reference(task) or (n, t) == (common.REFERENCE_ENVS, common.THREADS[0])
    ]
    return common.duet_pass("against_base", cells)


class AgainstBase:
    """Each implementation of the head against the base's, sample by sample in lockstep (``gate.meter.duet``)."""

    params = (common.TASKS, common.IMPLS, common.NUM_ENVS, common.THREADS)
    param_names = ("task", "impl", "num_envs", "threads")
    timeout = 1800
    rounds = 1  # the pass runs its own worker pairs (DUET_ROUNDS), one group each
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
        """Median over the pass's pairs of head time / base time (same cell, lockstep)."""
        return found[(task, impl, num_envs, threads)]

    track_ratio.unit = "ratio"
