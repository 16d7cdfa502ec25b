"""The collector check (``gate.meter.trajectory``): open loop at every step, closed loop over the first steps."""

from __future__ import annotations

import numpy as np
import pytest

import kernels
from gate.meter import trajectory

CASES = [(task, impl) for task in kernels.TASKS for impl in kernels.registry.available(task)]
STEPS = 40


@pytest.fixture(scope="module")
def reference_rollouts() -> dict[str, dict[str, np.ndarray]]:
    return {
        task: trajectory.rollout(task, kernels.REFERENCE, steps=STEPS, num_envs=12, seed=5, threads=2)
        for task in kernels.TASKS
    }


@pytest.mark.parametrize(("task", "impl"), [c for c in CASES if c[1] != kernels.REFERENCE])
def test_fused_implementations_compute_what_the_reference_computes_on_their_own_states(task, impl):
    """Open loop at every step of a 40-step rollout, closed loop over the first steps (``trajectory.check``)."""
    found = trajectory.check(task, [impl], steps=STEPS, num_envs=12, seed=5, threads=2)[impl]
    assert found.ok, found.message
    assert found.resets > 0  # episodes ended and were reset inside the compared steps


def test_the_open_loop_check_names_the_step_array_and_env_where_a_kernel_departs(monkeypatch):
    """A kernel that is right until step k and wrong for one env from then on: only the open loop can see it
    past the closed-loop steps, and its message says where."""
    from kernels.tasks.g1_walk.handwritten import HandwrittenWalk

    rng = np.random.default_rng()
    step, env = int(rng.integers(trajectory.CLOSED_LOOP_STEPS + 1, 20)), int(rng.integers(12))
    calls = {"n": 0}
    real = HandwrittenWalk._run

    def wrong(self, snap, out):
        real(self, snap, out)
        if calls["n"] >= step + 1:  # call 0 is the collector's construction
            out["reward"][env] += 0.01
        calls["n"] += 1

    monkeypatch.setattr(HandwrittenWalk, "_run", wrong)
    found = trajectory.check("g1_walk", ["handwritten"], steps=step + 3, num_envs=12, seed=5)["handwritten"]
    assert not found.ok
    assert f"open loop, step {step}: reward env {env}:" in found.message, found.message
    assert "closed loop" not in found.message


def test_the_open_loop_check_sees_unwritten_outputs_and_written_inputs(monkeypatch):
    from kernels.tasks.g1_motion.handwritten import HandwrittenMotion

    real = HandwrittenMotion._run
    for damage, expected in (
        (lambda snap, out: out["critic_obs"].__setitem__((3, 7), np.nan), "critic_obs env 3 index (7,)"),
        (lambda snap, out: snap["joint_pos"].__setitem__((2, 0), 9.0), "joint_pos was written (an input)"),
    ):

        def broken(self, snap, out, damage=damage):
            real(self, snap, out)
            damage(snap, out)

        monkeypatch.setattr(HandwrittenMotion, "_run", broken)
        run = trajectory.rollout("g1_motion", "handwritten", steps=2, num_envs=8, seed=1, shadow=True)
        assert run["open_loop"] and run["open_loop"][0][0] == 0
        assert expected in run["open_loop"][0][1], run["open_loop"]


def test_a_departing_trajectory_is_named_by_array_step_and_env(reference_rollouts):
    ref = reference_rollouts["g1_walk"]
    rng = np.random.default_rng()
    step, env = int(rng.integers(1, STEPS)), int(rng.integers(12))
    for key, poison in (
        ("done", lambda a: 1 - a),
        ("reward", lambda a: a + 0.01),
        ("obs", lambda a: a * np.nan),
    ):
        run = {k: v.copy() for k, v in ref.items()}
        run[key][step, env] = poison(run[key][step, env])
        (problem,) = trajectory.differences(run, ref)
        assert problem.startswith(f"{key} ") and f"at step {step} env {env}" in problem
    run = {k: v.copy() for k, v in ref.items()}
    run["reward"] = run["reward"] * (1 + 5e-4)  # a different summation order: within the tolerance
    assert trajectory.differences(run, ref) == []


def test_the_check_names_a_collector_that_fails_to_construct(monkeypatch):
    import gate.meter.trajectory as module

    real = module.Collector

    def broken(task, impl, **kwargs):
        if impl == "assembled":
            raise ValueError("the env's snapshot has no 'phase' buffer")
        return real(task, impl, **kwargs)

    monkeypatch.setattr(module, "Collector", broken)
    found = trajectory.check("g1_walk", ["numpy", "handwritten", "assembled"], steps=16, num_envs=16)
    assert found["numpy"].ok and found["handwritten"].ok and found["numpy"].max_reward_diff == 0
    assert found["handwritten"].resets > 0  # the rollout reaches episodes that ended
    bad = found["assembled"]
    assert not bad.ok and bad.max_reward_diff is None
    assert (
        "Collector('g1_walk', 'assembled'" in bad.message and "ValueError: the env's snapshot" in bad.message
    )


@pytest.mark.compile
def test_the_check_holds_on_another_numba_cpu_target():
    """The host's machine code and the cost signal's pinned target (x86-64-v3: AVX2, no AVX-512) round
    differently; what the check compares must not depend on it."""
    import os
    import subprocess
    import sys

    from gate.meter.cost import TARGET

    code = (
        "import kernels\n"
        "from gate.meter import trajectory\n"
        "for task in kernels.TASKS:\n"
        "    impls = [i for i in kernels.registry.available(task) if i != kernels.REFERENCE]\n"
        "    for c in trajectory.check(task, impls, steps=40, num_envs=12, seed=5, threads=2).values():\n"
        "        print(task, c.impl, c.ok, c.message)\n"
    )
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("NUMBA_CPU")}, **TARGET}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    rows = [line.split(" ", 3) for line in done.stdout.splitlines()]
    assert len(rows) == 6 and all(ok == "True" for _, _, ok, _ in rows), done.stdout
