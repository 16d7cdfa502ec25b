"""The end-to-end collector: policy, physics, snapshot, ``update_state`` through any implementation, reset, replay.

One ``step`` is timed phase by phase (``PHASES``):
- ``action``: the MLP forward pass and sampling, written straight into the snapshot's ``actions``;
- ``replay``: the ring-buffer writes;
- ``reset``: new state and bookkeeping for the rows whose episode ended in the step before (they are reset
  instead of stepped, and this step's kernel call gives them their first observation; see ``env.py``);
- ``physics``: the batch step of the other rows, plus mj_forward of the reset rows;
- ``getters``: the snapshot arrays and the observation noise, from MuJoCo;
- ``update_state``: the kernel;
- ``other``: ctrl writes, pushes, counters and command resampling (the env's bookkeeping).

``run`` warms up, then reports an active window: step-time median and p95, env-steps/s, CPU utilisation, and each
phase in microseconds per env-step.

A collector is built for one task, implementation and plan; an implementation that cannot serve the plan, or a
plan without the policy's observation group, is refused at construction. (A plan cannot read an array outside
the task's contract: plan validation refuses it, and the env fills every contract array.)
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numba
import numpy as np
from threadpoolctl import threadpool_limits

import kernels
from kernels.kernel import max_threads
from kernels.sim.calls import summary as calls_summary
from kernels.sim.calls import timed_calls
from kernels.sim.env import POLICY_OBS, TaskEnv
from kernels.sim.motion import MotionEnv
from kernels.sim.policy import MLPPolicy
from kernels.sim.replay import Replay
from kernels.sim.walk import WalkEnv
from kernels.spec import TaskPlan

if TYPE_CHECKING:
    from kernels.sim.baseline import PhysicsBaseline

PHASES = ("physics", "getters", "update_state", "reset", "action", "replay", "other")
# Physics is the batch step plus mj_forward of the reset rows; both are also reported on their own.
PHYSICS_PARTS = ("step", "reset_forward")
# Everything but physics and the policy forward pass: the harness cost the issue budgets per env-step.
OVERHEAD_PHASES = ("getters", "update_state", "reset", "replay", "other")
ENVS: dict[str, type[TaskEnv]] = {"g1_walk": WalkEnv, "g1_motion": MotionEnv}


def check_threads(threads: int | None) -> int:
    if threads is None:
        return max_threads()
    if isinstance(threads, bool) or not isinstance(threads, int) or not 1 <= threads <= max_threads():
        raise ValueError(
            f"threads must be an integer from 1 to {max_threads()} (the threads Numba may use here), "
            f"got {threads!r}"
        )
    return threads


class Collector:
    """``num_envs`` envs of ``task`` collecting with ``impl``'s ``update_state``."""

    def __init__(
        self,
        task: str,
        impl: str,
        *,
        num_envs: int,
        threads: int | None = None,
        seed: int = 0,
        plan: TaskPlan | None = None,
        policy_threads: int = 1,
    ):
        if task not in ENVS:
            raise ValueError(f"unknown task {task!r}; known tasks: {', '.join(ENVS)}")
        if isinstance(num_envs, bool) or not isinstance(num_envs, int) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive integer, got {num_envs!r}")
        self.task, self.impl, self.num_envs = task, impl, num_envs
        self.threads = check_threads(threads)
        self.policy_threads = check_threads(policy_threads)
        self.plan = kernels.registry.default_plan(task) if plan is None else plan
        self.kernel = kernels.load(task, impl, num_envs=num_envs, threads=self.threads, plan=self.plan)
        self.out = self.kernel.outputs
        if POLICY_OBS not in self.out:
            raise ValueError(
                f"plan {self.plan.hash[:12]} of {task} has no {POLICY_OBS!r} observation group for the policy; "
                f"add one (groups: {', '.join(g.name for g in self.plan.observations)})"
            )
        self.env = ENVS[task](num_envs, self.threads, seed)
        self.rng = np.random.default_rng(seed + 1)
        act_dim = self.env.snap["actions"].shape[1]
        obs_dim = self.out[POLICY_OBS].shape[1]
        self.policy = MLPPolicy(obs_dim, act_dim, num_envs, seed + 2)
        self.replay = Replay(num_envs, obs_dim, act_dim)
        self.steps = 0
        self.resets = 0
        with self.threads_limited():  # every env starts with a reset step: its first observation, no physics
            self.resets += len(self.env.pending)
            self.env.begin_reset(self.env.take_pending())
            self.env.sim.forward_rows(self.env.all_rows)
            self.env.fill_snapshot(self.env.snap)
            self.kernel.update_state(self.env.snap)  # checks every buffer of the snapshot, once
            self.env.advance(self.out)

    @contextlib.contextmanager
    def threads_limited(self):
        """Numba (getters, kernels) and MuJoCo run on ``threads`` threads, BLAS (the policy) on ``policy_threads``."""
        previous = numba.get_num_threads()
        numba.set_num_threads(self.threads)
        try:
            with threadpool_limits(limits=self.policy_threads, user_api="blas"):
                yield
        finally:
            numba.set_num_threads(previous)

    def step(
        self, times: np.ndarray | None = None, before_physics: Callable[[np.ndarray], None] | None = None
    ) -> float:
        """One control step for every env: the rows that ended last step are reset instead of stepped.

        Returns the step's wall time (s), less the time of ``before_physics``.

        Phase times (s) go into ``times`` when given: the ``PHASES``, then the ``PHYSICS_PARTS``.
        ``before_physics(rows)`` runs untimed just before the batch step of ``rows`` (physics baselines copy the
        state there).
        """
        env, out, clock = self.env, self.out, time.perf_counter
        t0 = clock()
        actions = self.policy.act(out[POLICY_OBS], self.rng, out=env.snap["actions"])
        t1 = clock()
        self.replay.write_step(out[POLICY_OBS], actions)
        t2 = clock()
        env.apply_actions()
        t3 = clock()
        rows = env.take_pending()
        stepping = env.all_rows
        if len(rows):
            env.begin_reset(rows)
            stepping = env.stepping()
            self.resets += len(rows)
        t4 = clock()
        if len(rows):
            env.sim.forward_rows(rows)
        t5 = clock()
        if before_physics is not None:
            before_physics(stepping)
        t6 = clock()
        env.sim.step(None if len(rows) == 0 else stepping)
        t7 = clock()
        env.fill_snapshot(env.snap)
        t8 = clock()
        self.kernel.update_state(env.snap, check_layout=False)  # the env's buffers, checked at construction
        t9 = clock()
        self.replay.write_outcome(out["reward"], out["done"], env.just_reset)
        t10 = clock()
        env.advance(out)
        t11 = clock()
        self.steps += 1
        if times is not None:
            step, forward = t7 - t6, t5 - t4
            replay, other = (t2 - t1) + (t10 - t9), (t3 - t2) + (t11 - t10)
            times[:] = (step + forward, t8 - t7, t9 - t8, t4 - t3, t1 - t0, replay, other, step, forward)
        return (t11 - t0) - (t6 - t5)

    def run(
        self,
        steps: int,
        *,
        warmup: int = 10,
        progress: Callable[[int, int], None] | None = None,
        baseline: PhysicsBaseline | None = None,
        calls: bool = False,
    ) -> CollectReport:
        """``warmup`` untimed steps, then ``steps`` timed ones; the report covers the timed window.

        With a ``baseline``, every timed step's physics is also stepped alone (bare batch and rollout) on a copy
        of the same state; those extra steps are excluded from the step times but not from the wall time that
        CPU utilisation is measured over. With ``calls``, the calls of ``kernels.sim.calls.CALLS`` are timed
        one by one in the timed window (``extra["calls"]``).
        """
        times = np.zeros((steps, len(PHASES) + len(PHYSICS_PARTS)))
        wall = np.zeros(steps)
        rewards = np.zeros(steps)
        with self.threads_limited():
            for k in range(warmup):
                self.step()
                if progress:
                    progress(k + 1, warmup + steps)
            resets_before = self.resets
            timing = timed_calls(self) if calls else contextlib.nullcontext({})
            with timing as samples:
                cpu0, wall0 = time.process_time(), time.perf_counter()
                self._timed(steps, warmup, times, wall, rewards, progress, baseline)
                cpu, elapsed = time.process_time() - cpu0, time.perf_counter() - wall0
        report = CollectReport(
            task=self.task,
            impl=self.impl,
            num_envs=self.num_envs,
            threads=self.threads,
            steps=steps,
            warmup=warmup,
            step_s=wall,
            phase_s=times,
            cpu_util=cpu / elapsed,
            resets=self.resets - resets_before,
            mean_reward=float(rewards.mean()),
        )
        if baseline:
            report.extra["physics_baseline"] = baseline.summary(times[:, len(PHASES)])
        if calls:
            report.extra["calls"] = calls_summary(samples, steps, self.num_envs)
        return report

    def _timed(
        self,
        steps: int,
        warmup: int,
        times: np.ndarray,
        wall: np.ndarray,
        rewards: np.ndarray,
        progress: Callable[[int, int], None] | None,
        baseline: PhysicsBaseline | None,
    ) -> None:
        """The timed window: step times, phase times and mean rewards into the arrays."""
        for k in range(steps):
            wall[k] = self.step(times[k], before_physics=baseline.capture if baseline else None)
            if baseline:
                baseline.step()
            stepped = ~self.env.just_reset  # a reset row's reward means nothing
            rewards[k] = float(self.out["reward"][stepped].mean()) if stepped.any() else 0.0
            if progress:
                progress(warmup + k + 1, warmup + steps)


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
        """Mean phase time per env-step (us); the phases sum to the mean step time."""
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
