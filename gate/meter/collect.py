"""A collector run timed from outside: ``run`` warms up, then times an active window of ``Collector.step``.

The report: step-time median and p95 and env-steps/s (wall time of each step, taken here), CPU utilisation over
the window, each phase in microseconds per env-step (the collector's own account, ``Collector.step``'s phase
times), resets and the mean reward. With a physics baseline the same states are also stepped by bare MuJoCo
(``gate.meter.physics``); with ``calls`` the calls of ``gate.meter.calls.CALLS`` are timed one by one.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from gate.meter.calls import summary as calls_summary
from gate.meter.calls import timed_calls
from kernels.sim.collector import OVERHEAD_PHASES, PHASES, PHYSICS_PARTS, Collector

if TYPE_CHECKING:
    from gate.meter.physics import PhysicsBaseline


def timed_step(collector: Collector, times: np.ndarray | None = None, before_physics=None) -> float:
    """One ``collector.step``, its wall time (s) taken here, less the time of ``before_physics``."""
    spent = [0.0]
    hook = None
    if before_physics is not None:

        def hook(rows: np.ndarray) -> None:
            t0 = time.perf_counter()
            before_physics(rows)
            spent[0] += time.perf_counter() - t0

    t0 = time.perf_counter()
    collector.step(times, before_physics=hook)
    return time.perf_counter() - t0 - spent[0]


def run(
    collector: Collector,
    steps: int,
    *,
    warmup: int = 10,
    progress: Callable[[int, int], None] | None = None,
    baseline: PhysicsBaseline | None = None,
    calls: bool = False,
) -> CollectReport:
    """``warmup`` untimed steps, then ``steps`` timed ones; the report covers the timed window.

    With a ``baseline``, every timed step's physics is also stepped alone (bare batch and rollout) on a copy of
    the same state; those extra steps are excluded from the step times but not from the wall time that CPU
    utilisation is measured over. With ``calls``, the calls of ``gate.meter.calls.CALLS`` are timed one by one
    in the timed window (``extra["calls"]``).
    """
    times = np.zeros((steps, len(PHASES) + len(PHYSICS_PARTS)))
    wall = np.zeros(steps)
    rewards = np.zeros(steps)
    c = collector
    with c.threads_limited():
        for k in range(warmup):
            c.step()
            if progress:
                progress(k + 1, warmup + steps)
        resets_before = c.resets
        timing = timed_calls(c) if calls else contextlib.nullcontext({})
        with timing as samples:
            cpu0, wall0 = time.process_time(), time.perf_counter()
            for k in range(steps):
                wall[k] = timed_step(c, times[k], before_physics=baseline.capture if baseline else None)
                if baseline:
                    baseline.step()
                stepped = ~c.env.just_reset  # a reset row's reward means nothing
                rewards[k] = float(c.out["reward"][stepped].mean()) if stepped.any() else 0.0
                if progress:
                    progress(warmup + k + 1, warmup + steps)
            cpu, elapsed = time.process_time() - cpu0, time.perf_counter() - wall0
    report = CollectReport(
        task=c.task,
        impl=c.impl,
        num_envs=c.num_envs,
        threads=c.threads,
        steps=steps,
        warmup=warmup,
        step_s=wall,
        phase_s=times,
        cpu_util=cpu / elapsed,
        resets=c.resets - resets_before,
        mean_reward=float(rewards.mean()),
    )
    if baseline:
        report.extra["physics_baseline"] = baseline.summary(times[:, len(PHASES)])
    if calls:
        report.extra["calls"] = calls_summary(samples, steps, c.num_envs)
    return report


@dataclass
class CollectReport:
    task: str
    impl: str
    num_envs: int
    threads: int
    steps: int
    warmup: int
    step_s: np.ndarray  # (steps,) wall time of each step
    phase_s: np.ndarray  # (steps, len(PHASES) + len(PHYSICS_PARTS))
    cpu_util: float  # CPU seconds per wall second over the window
    resets: int
    mean_reward: float
    extra: dict = field(default_factory=dict)

    @property
    def us_per_env_step(self) -> dict[str, float]:
        """Mean phase time per env-step (us); the phases sum to about the mean step time."""
        means = self.phase_s[:, : len(PHASES)].mean(axis=0) / self.num_envs * 1e6
        return {name: float(v) for name, v in zip(PHASES, means, strict=True)}

    @property
    def physics_us(self) -> dict[str, float]:
        means = self.phase_s[:, len(PHASES) :].mean(axis=0) / self.num_envs * 1e6
        return {name: float(v) for name, v in zip(PHYSICS_PARTS, means, strict=True)}

    @property
    def overhead_us(self) -> float:
        per = self.us_per_env_step
        return sum(per[p] for p in OVERHEAD_PHASES)

    def to_dict(self) -> dict:
        return {
            "task": self.task,
            "impl": self.impl,
            "num_envs": self.num_envs,
            "threads": self.threads,
            "steps": self.steps,
            "warmup": self.warmup,
            "env_steps_per_s": self.num_envs * self.steps / float(self.step_s.sum()),
            "step_ms": {
                "median": float(np.median(self.step_s) * 1e3),
                "p95": float(np.percentile(self.step_s, 95) * 1e3),
            },
            "us_per_env_step": self.us_per_env_step,
            "physics_us_per_env_step": self.physics_us,
            "overhead_us_per_env_step": self.overhead_us,
            "cpu_util": self.cpu_util,
            "resets": self.resets,
            "mean_reward": self.mean_reward,
            **self.extra,
        }
