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

What times a collector from outside (a run's step times, CPU utilisation, per-call timers, a physics baseline)
is the meter's: ``gate.meter.collect``. The phase times ``step`` returns are the collector's own account of where
its step went.

A collector is built for one task, implementation and plan, with the task's env (its spec's ``env``, from the
registry: this repository's by default, or the one given); a task without an env, an implementation that cannot
serve the plan, or a plan without the policy's observation group, is refused at construction. (A plan cannot read
an array outside the task's contract: plan validation refuses it, and the env fills every contract array.)
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable

import numba
import numpy as np
from threadpoolctl import threadpool_limits

from kernels import registry as default_registry
from kernels.kernel import max_threads
from kernels.registry import Registry
from kernels.sim.env import POLICY_OBS
from kernels.sim.policy import MLPPolicy
from kernels.sim.replay import Replay
from kernels.spec import TaskPlan

PHASES = ("physics", "getters", "update_state", "reset", "action", "replay", "other")
# Physics is the batch step plus mj_forward of the reset rows; both are also reported on their own.
PHYSICS_PARTS = ("step", "reset_forward")
# Everything but physics and the policy forward pass: the harness's own cost per env-step.
OVERHEAD_PHASES = ("getters", "update_state", "reset", "replay", "other")


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
    """``num_envs`` envs of ``task`` collecting with ``impl``'s ``update_state`` (the tasks of ``registry``, default
    this repository's)."""

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
        registry: Registry | None = None,
    ):
        registry = default_registry.default() if registry is None else registry
        env_class = registry.env_class(task)  # unknown task: ValueError naming the known ones
        if env_class is None:
            raise ValueError(
                f"task {task!r} has no collector env (its spec's env is None): it has no collector cells"
            )
        if isinstance(num_envs, bool) or not isinstance(num_envs, int) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive integer, got {num_envs!r}")
        self.task, self.impl, self.num_envs = task, impl, num_envs
        self.threads = check_threads(threads)
        self.policy_threads = check_threads(policy_threads)
        self.plan = registry.default_plan(task) if plan is None else plan
        self.kernel = registry.load(task, impl, num_envs=num_envs, threads=self.threads, plan=self.plan)
        self.out = self.kernel.outputs
        if POLICY_OBS not in self.out:
            raise ValueError(
                f"plan {self.plan.hash[:12]} of {task} has no {POLICY_OBS!r} observation group for the policy; "
                f"add one (groups: {', '.join(g.name for g in self.plan.observations)})"
            )
        self.env = env_class(num_envs, self.threads, seed)
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
