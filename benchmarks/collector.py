"""asv suite: the end-to-end collector (MuJoCo G1 physics, getters, update_state, reset, policy, replay) per
task x implementation x num_envs, under the same placement as the hot slice.

One process (``setup_cache``) runs every case in turn with ``kernels.sim.collector.Collector`` at the
placement's full thread count, and every ``track_`` looks its number up: the step time, env-steps/s (as its
inverse, microseconds per env-step, so asv's "higher is worse" holds), each phase in microseconds per env-step,
the overhead (everything but physics and the policy forward pass) and CPU utilisation. Each report also goes
to the sidecar (kind ``collector``). Like the other ``track_`` suites it exists when ``FUSEGATE_BENCH_TRACKS=1``
(the full profile's default): one value per process, which ``asv continuous`` compares without statistics.

Profiles: ``quick`` runs 256 envs for 30 steps after 5 of warm-up; ``full`` runs 1024 and 4096 envs for 100
steps after 10.
"""

from __future__ import annotations

from benchmarks import _common as common
from kernels import registry

NUM_ENVS = [256] if common.PROFILE == "quick" else [1024, 4096]
STEPS, WARMUP = (30, 5) if common.PROFILE == "quick" else (100, 10)


def _measure() -> dict:
    from kernels.sim.collector import Collector

    applied = common.place()
    reports = {}
    for task in common.TASKS:
        for impl in registry.available(task):
            for n in NUM_ENVS:
                collector = Collector(task, impl, num_envs=n, threads=applied.threads)
                report = collector.run(STEPS, warmup=WARMUP).to_dict()
                del collector  # its batch of N MjData goes before the next one is built
                reports[(task, impl, n)] = report
                common.write_sidecar("collector", {"report": report})
    return reports


if common.TRACKS:  # see benchmarks/_common.py

    class Collector:
        params = (common.TASKS, common.IMPLS, NUM_ENVS)
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
