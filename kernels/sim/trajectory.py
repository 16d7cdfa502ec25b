"""Does a fused implementation drive the collector the way the NumPy reference does?

A short fixed-seed rollout of ``Collector`` per implementation, compared step by step with the reference's:
``done`` and the reset rows must be identical, rewards and the policy's observation within ``TOLERANCE`` (the
tolerances the collector tests have always used: a fused kernel sums in another order, and the chaotic
physics carries an ulp of difference in an observation into the next actions, so bit equality would be too
strict, while a wrong term or a missed termination is far outside them).

``check`` is what the gate runs (``benchmarks/collector.py``): every failure (construction, a step that raises,
a trajectory that departs) comes back as a message naming the task, the implementation and what happened.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kernels.registry import REFERENCE
from kernels.sim.collector import Collector
from kernels.sim.env import POLICY_OBS

# (rtol, atol) of np.allclose per compared array; done and resets are compared exactly.
TOLERANCE = {"reward": (1e-3, 1e-4), "obs": (1e-3, 1e-3)}


def rollout(
    task: str, impl: str, *, steps: int, num_envs: int, seed: int = 0, threads: int = 1
) -> dict[str, np.ndarray]:
    """``steps`` collector steps: per step the reward, done and reset rows the replay recorded, the policy's
    observation, and the resets so far."""
    c = Collector(task, impl, num_envs=num_envs, threads=threads, seed=seed)
    record: dict[str, list] = {"reward": [], "done": [], "reset": [], "obs": [], "resets": []}
    with c.threads_limited():
        for _ in range(steps):
            c.step()
            last = c.replay.last()
            for key in ("reward", "done", "reset"):
                record[key].append(last[key].copy())
            record["obs"].append(c.out[POLICY_OBS].copy())
            record["resets"].append(c.resets)
    return {k: np.array(v) for k, v in record.items()}


def differences(run: dict[str, np.ndarray], ref: dict[str, np.ndarray]) -> list[str]:
    """What departs from the reference's rollout, first step first; empty when the rollouts agree."""
    problems = []
    for key in ("done", "reset"):
        bad = np.argwhere(run[key] != ref[key])
        if len(bad):
            step, env = bad[0]
            problems.append(
                f"{key} differs at step {step} env {env} ({run[key][step, env]} vs reference "
                f"{ref[key][step, env]}; {len(bad)} (step, env) entries differ)"
            )
    for key, (rtol, atol) in TOLERANCE.items():
        a, b = run[key], ref[key]
        if a.shape != b.shape:
            problems.append(f"{key} has shape {a.shape}, the reference {b.shape}")
            continue
        close = np.isclose(a, b, rtol=rtol, atol=atol) & np.isfinite(a)
        if not close.all():
            where = tuple(int(i) for i in np.argwhere(~close)[0])
            diff = np.abs(a - b)
            problems.append(
                f"{key} departs from the reference beyond rtol={rtol:g}, atol={atol:g} at step {where[0]} env "
                f"{where[1]} ({a[where]:.6g} vs {b[where]:.6g}; max abs difference {np.nanmax(diff):.3g})"
            )
    return problems


@dataclass(frozen=True, kw_only=True)
class Check:
    task: str
    impl: str
    ok: bool
    message: str = ""  # why not ok
    max_reward_diff: float | None = None  # against the reference; 0 for the reference itself
    resets: int = 0  # episodes reset in the rollout beyond the first reset of every env

    def to_dict(self) -> dict:
        return dict(self.__dict__)


def check(
    task: str, impls: list[str], *, steps: int, num_envs: int, seed: int = 0, threads: int = 1
) -> dict[str, Check]:
    """Each implementation's rollout against the reference's (the reference is always rolled out first)."""

    def attempt(impl: str) -> dict[str, np.ndarray] | str:
        try:
            return rollout(task, impl, steps=steps, num_envs=num_envs, seed=seed, threads=threads)
        except Exception as exc:  # every failure is the check's finding, named in its message
            return (
                f"Collector({task!r}, {impl!r}, num_envs={num_envs}, threads={threads}) raised "
                f"{type(exc).__name__}: {exc}"
            )

    ref = attempt(REFERENCE)
    out = {}
    for impl in impls:
        run = ref if impl == REFERENCE else attempt(impl)
        if isinstance(run, str):
            out[impl] = Check(task=task, impl=impl, ok=False, message=run)
        elif isinstance(ref, str):
            out[impl] = Check(task=task, impl=impl, ok=False, message=f"no reference to compare with: {ref}")
        else:
            problems = differences(run, ref)
            resets = int(run["resets"][-1]) - num_envs
            out[impl] = Check(
                task=task,
                impl=impl,
                ok=not problems,
                message="; ".join(f"{task}/{impl} collector: {p}" for p in problems),
                max_reward_diff=float(np.nanmax(np.abs(run["reward"] - ref["reward"]))),
                resets=resets,
            )
    return out
