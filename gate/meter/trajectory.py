"""Does a fused implementation drive the collector the way the NumPy reference does?

Two comparisons per implementation, on one fixed-seed rollout of ``Collector``:

- **open loop, every step**: the implementation's collector runs closed loop on its own outputs, and before each
  kernel call the snapshot (physics state, noise, bookkeeping) is copied and the NumPy reference evaluated on
  the copy. The kernel's outputs and updated state must match the reference's within the kernel parity
  tolerances (spec E5: ``done`` and flags exactly), and the kernel must leave its inputs as they were. This
  compares what the kernel computes, not where the physics takes it, so it holds on any horizon, seed or CPU.
- **closed loop, the first ``CLOSED_LOOP_STEPS`` steps**: the implementation's rollout against the reference's own
  rollout (``done`` and resets identical, rewards and the policy's observation within ``TOLERANCE``): the
  wiring of the whole step, before the chaotic physics can amplify an ulp of summation order into the next
  actions. (Compared over 40 steps, a last-digit difference in one observation becomes a 0.005 difference at
  step 15 on some CPUs: rounding, not a wrong kernel.)

``check`` is what the gate runs (``benchmarks/collector.py``): every failure (construction, a step that raises, a
kernel that departs) comes back as a message naming the task, the implementation and what happened.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from gate.meter import parity, subject
from kernels.kernel import Kernel
from kernels.sim.collector import Collector
from kernels.sim.env import POLICY_OBS

# (rtol, atol) of np.allclose per array of the closed-loop comparison; done and resets are compared exactly.
TOLERANCE = {"reward": (1e-3, 1e-4), "obs": (1e-3, 1e-3)}
# Closed-loop steps compared with the reference's rollout: too few for an ulp of summation order to grow past
# TOLERANCE through the physics (docs/measurements.md: seeds, horizons and Numba targets measured).
CLOSED_LOOP_STEPS = 2


def _departure(name: str, got: np.ndarray, want: np.ndarray, tolerance: tuple[float, float]) -> str | None:
    """Where ``got`` first leaves the parity tolerance (ATOL, RTOL) of ``want`` (exact for integer arrays), or
    None."""
    atol, rtol = tolerance
    if got.shape != want.shape:
        return f"{name} has shape {got.shape}, the reference {want.shape}"
    if got.dtype.kind == "f":
        with np.errstate(invalid="ignore", over="ignore"):
            g, w = got.astype(np.float64), want.astype(np.float64)
            bad = ~((np.abs(g - w) <= atol + rtol * np.abs(w)) | (np.isnan(g) & np.isnan(w)) | (g == w))
    else:
        bad = got != want
    if not bad.any():
        return None
    where = tuple(int(i) for i in np.argwhere(bad)[0])
    at = f"env {where[0]}" + (f" index {where[1:]}" if len(where) > 1 else "") if got.ndim else "scalar"
    return f"{name} {at}: {got[where]!r} vs reference {want[where]!r} ({int(bad.sum())} elements differ)"


class Shadowed:
    """A collector's kernel whose every call is also evaluated by the reference on a copy of the same snapshot.

    Outputs are poisoned before each call (an unwritten element fails). ``problems`` collects the first
    departure of each step: ``(step, message)``.
    """

    def __init__(self, kernel: Kernel, reference: Kernel, tolerance: tuple[float, float]):
        self.kernel, self.reference, self.tolerance = kernel, reference, tolerance
        self.outputs = kernel.outputs
        self.calls = 0
        self.problems: list[tuple[int, str]] = []

    def __getattr__(self, name: str):
        return getattr(self.kernel, name)

    def update_state(self, snap: Mapping[str, np.ndarray], *, check_layout: bool = True) -> dict:
        before = parity.copy(snap)
        want = self.reference.update_state(before)
        parity.poison(self.kernel.outputs)
        got = self.kernel.update_state(snap, check_layout=check_layout)
        contract = self.kernel.contract
        found = [_departure(s.name, got[s.name], want[s.name], self.tolerance) for s in contract.outputs]
        found += [_departure(s.name, snap[s.name], before[s.name], self.tolerance) for s in contract.state]
        found += [
            f"{s.name} was written (an input)"
            for s in contract.inputs
            if not np.array_equal(snap[s.name], before[s.name], equal_nan=True)
        ]
        problem = next((p for p in found if p), None)
        if problem:
            self.problems.append((self.calls, problem))
        self.calls += 1
        return got


def rollout(
    task: str, impl: str, *, steps: int, num_envs: int, seed: int = 0, threads: int = 1, shadow: bool = False
) -> dict:
    """``steps`` collector steps: per step the reward, done and reset rows the replay recorded, the policy's
    observation, and the resets so far. With ``shadow``, every kernel call is also checked against the reference
    on the same snapshot (``Shadowed``); its departures are under ``"open_loop"`` as ``(step, message)``."""
    c = Collector(task, impl, num_envs=num_envs, threads=threads, seed=seed)
    if shadow:
        registry = subject.registry()
        reference = registry.load(task, registry.reference(task), num_envs=num_envs, plan=c.plan)
        c.kernel = Shadowed(c.kernel, reference, subject.tolerance(task))
    record: dict[str, list] = {"reward": [], "done": [], "reset": [], "obs": [], "resets": []}
    with c.threads_limited():
        for _ in range(steps):
            c.step()
            last = c.replay.last()
            for key in ("reward", "done", "reset"):
                record[key].append(last[key].copy())
            record["obs"].append(c.out[POLICY_OBS].copy())
            record["resets"].append(c.resets)
    run = {k: np.array(v) for k, v in record.items()}
    if shadow:
        run["open_loop"] = c.kernel.problems
    return run


def differences(run: Mapping[str, np.ndarray], ref: Mapping[str, np.ndarray]) -> list[str]:
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


def _first(run: Mapping[str, np.ndarray], steps: int) -> dict[str, np.ndarray]:
    return {k: run[k][:steps] for k in ("reward", "done", "reset", "obs", "resets")}


@dataclass(frozen=True, kw_only=True)
class Check:
    task: str
    impl: str
    ok: bool
    message: str = ""  # why not ok
    max_reward_diff: float | None = None  # closed loop, against the reference's rollout; 0 for the reference
    resets: int = 0  # episodes reset in the rollout beyond the first reset of every env

    def to_dict(self) -> dict:
        return dict(self.__dict__)


def check(
    task: str, impls: list[str], *, steps: int, num_envs: int, seed: int = 0, threads: int = 1
) -> dict[str, Check]:
    """Each implementation's rollout: open loop against the reference on its own states at every step, and
    closed loop against the reference's rollout for the first ``CLOSED_LOOP_STEPS`` steps."""

    def attempt(impl: str, horizon: int, shadow: bool) -> dict | str:
        try:
            return rollout(
                task, impl, steps=horizon, num_envs=num_envs, seed=seed, threads=threads, shadow=shadow
            )
        except Exception as exc:  # every failure is the check's finding, named in its message
            return (
                f"Collector({task!r}, {impl!r}, num_envs={num_envs}, threads={threads}) raised "
                f"{type(exc).__name__}: {exc}"
            )

    closed = min(steps, CLOSED_LOOP_STEPS)
    reference = subject.registry().reference(task)
    ref = attempt(reference, steps if reference in impls else closed, False)
    out = {}
    for impl in impls:
        run = ref if impl == reference else attempt(impl, steps, True)
        if isinstance(run, str):
            out[impl] = Check(task=task, impl=impl, ok=False, message=run)
            continue
        if isinstance(ref, str):
            out[impl] = Check(task=task, impl=impl, ok=False, message=f"no reference to compare with: {ref}")
            continue
        problems = [
            f"open loop, step {step}: {p} (the reference on the same snapshot)"
            for step, p in run.get("open_loop", [])[:1]
        ]
        problems += [f"closed loop: {p}" for p in differences(_first(run, closed), _first(ref, closed))]
        out[impl] = Check(
            task=task,
            impl=impl,
            ok=not problems,
            message="; ".join(f"{task}/{impl} collector: {p}" for p in problems),
            max_reward_diff=float(np.nanmax(np.abs(run["reward"][:closed] - ref["reward"][:closed]))),
            resets=int(run["resets"][-1]) - num_envs,
        )
    return out
