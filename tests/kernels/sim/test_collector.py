"""The end-to-end collector, for every task x implementation of the registry."""

from __future__ import annotations

import numpy as np
import pytest

import kernels
from kernels.sim import getters, trajectory
from kernels.sim.calls import CALLS
from kernels.sim.collector import PHASES, Collector
from kernels.spec import RewardTerm

CASES = [(task, impl) for task in kernels.TASKS for impl in kernels.registry.available(task)]
STEPS = 40


def _rollout(
    task: str, impl: str, steps: int = STEPS, num_envs: int = 12, seed: int = 5, threads: int = 2
) -> dict[str, np.ndarray]:
    return trajectory.rollout(task, impl, steps=steps, num_envs=num_envs, seed=seed, threads=threads)


@pytest.fixture(scope="module")
def reference_rollouts() -> dict[str, dict[str, np.ndarray]]:
    return {task: _rollout(task, kernels.REFERENCE) for task in kernels.TASKS}


@pytest.mark.parametrize(("task", "impl"), CASES)
def test_a_random_policy_collects_finite_rewards_and_resets(task, impl, reference_rollouts):
    run = reference_rollouts[task] if impl == kernels.REFERENCE else _rollout(task, impl)
    assert np.isfinite(run["reward"]).all() and np.isfinite(run["obs"]).all()
    assert run["resets"][-1] > 12  # beyond the first reset of all 12 envs: the untrained policy falls
    assert run["reward"].std() > 0


@pytest.mark.parametrize(("task", "impl"), [c for c in CASES if c[1] != kernels.REFERENCE])
def test_fused_implementations_compute_what_the_reference_computes_on_their_own_states(task, impl):
    """Open loop at every step of a 40-step rollout, closed loop over the first steps (``trajectory.check``)."""
    found = trajectory.check(task, [impl], steps=STEPS, num_envs=12, seed=5, threads=2)[impl]
    assert found.ok, found.message
    assert found.resets > 0  # episodes ended and were reset inside the compared steps


def test_the_open_loop_check_names_the_step_array_and_env_where_a_kernel_departs(monkeypatch):
    """A kernel that is right until step k and wrong for one env from then on: only the open loop can see it
    past the closed-loop steps, and its message says where."""
    from kernels.handwritten.g1_walk import HandwrittenWalk

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
    from kernels.handwritten.g1_motion import HandwrittenMotion

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
    import kernels.sim.trajectory as module

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


def test_the_same_seed_gives_the_same_trajectory_on_any_thread_count_and_another_seed_does_not():
    a, b = _rollout("g1_walk", "handwritten", 8), _rollout("g1_walk", "handwritten", 8, threads=1)
    np.testing.assert_array_equal(a["obs"], b["obs"])
    np.testing.assert_array_equal(a["reward"], b["reward"])
    other = _rollout("g1_walk", "handwritten", 8, seed=6)
    assert not np.array_equal(a["obs"], other["obs"])


@pytest.mark.parametrize("task", kernels.TASKS)
def test_report_has_the_documented_fields(task):
    report = Collector(task, "handwritten", num_envs=8, threads=1).run(3, warmup=1).to_dict()
    assert set(report["us_per_env_step"]) == set(PHASES)
    assert report["step_ms"]["p95"] >= report["step_ms"]["median"] > 0
    assert report["env_steps_per_s"] > 0 and report["threads"] == 1
    per_step_us = sum(report["us_per_env_step"].values()) * 8
    assert per_step_us == pytest.approx(1e3 * report["env_steps_per_s"] ** -1 * 8 * 1e3, rel=0.05)
    overhead = sum(
        report["us_per_env_step"][p] for p in ("getters", "update_state", "reset", "replay", "other")
    )
    assert report["overhead_us_per_env_step"] == pytest.approx(overhead)


@pytest.mark.compile
def test_an_implementation_that_cannot_serve_the_plan_fails_at_construction():
    plan = kernels.registry.default_plan("g1_walk")
    extended = plan.replace(rewards=[*plan.rewards, RewardTerm(name="torques", weight=-1e-4)])
    with pytest.raises(ValueError, match="implements only the default plan"):
        Collector("g1_walk", "handwritten", num_envs=4, plan=extended)
    Collector("g1_walk", "assembled", num_envs=4, plan=extended)  # the assembled kernel serves it


def test_a_plan_without_the_policy_observation_is_refused():
    plan = kernels.registry.default_plan("g1_motion")
    critic_only = plan.replace(observations=[g for g in plan.observations if g.name != "obs"])
    with pytest.raises(ValueError, match="no 'obs' observation group"):
        Collector("g1_motion", "assembled", num_envs=4, plan=critic_only)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"task": "g1_run", "impl": "handwritten", "num_envs": 4}, "unknown task"),
        ({"task": "g1_walk", "impl": "fastest", "num_envs": 4}, "unknown implementation"),
        ({"task": "g1_walk", "impl": "handwritten", "num_envs": 0}, "num_envs must be a positive integer"),
        (
            {"task": "g1_walk", "impl": "handwritten", "num_envs": 4, "threads": 99},
            "threads must be an integer",
        ),
    ],
)
def test_bad_arguments_are_refused_by_name(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Collector(**kwargs)


def test_an_ended_episode_is_reset_at_the_next_step_and_observed_from_its_new_state():
    c = Collector("g1_walk", "handwritten", num_envs=16, threads=2, seed=5)
    with c.threads_limited():
        for _ in range(STEPS):
            c.step()
            ended = c.env.pending.copy()
            if len(ended):
                break
        assert len(ended), "a random policy ends some episode within the rollout"
        c.step()
    last = c.replay.last()
    assert np.flatnonzero(last["reset"]).tolist() == ended.tolist()
    assert (last["reward"][ended] == 0).all() and (last["done"][ended] == 0).all()
    snap = c.env.snap
    # their first observation: the reset phase [0, pi] (cos 1, -1) and zero last action
    np.testing.assert_allclose(c.out["obs"][ended, 99:101], [[1.0, -1.0]] * len(ended), atol=1e-6)
    assert (c.out["obs"][ended, 70:99] == 0).all()
    # and the bookkeeping the kernel advanced is back at its reset values for the next step
    np.testing.assert_allclose(snap["phase"][ended], [[0.0, np.pi]] * len(ended), atol=1e-6)
    assert (snap["feet_air_time"][ended] == 0).all() and (c.env.episode_steps[ended] == 0).all()


def test_running_off_the_clip_resamples_the_motion_without_ending_the_episode():
    c = Collector("g1_motion", "handwritten", num_envs=4, threads=1, seed=2)
    env = c.env
    env.episode_steps[:] = 7
    env.resample[:] = [True, False, False, False]  # env 0 ran off the clip, env 1 ended its episode
    rows = np.array([0, 1])
    env.begin_reset(rows)
    assert env.episode_steps.tolist() == [7, 0, 7, 7]
    assert ((env.snap["time_steps"][rows] >= 0) & (env.snap["time_steps"][rows] < env.frames)).all()


def test_calls_are_timed_in_the_loop_and_unwrapped_afterwards():
    c = Collector("g1_walk", "handwritten", num_envs=8, threads=1, seed=2)
    report = c.run(4, warmup=1, calls=True)
    calls = report.extra["calls"]
    assert set(calls) == {f"{owner}.{method}" for owner, method in CALLS}
    for once in ("policy.act", "sim.step", "env.fill_snapshot", "kernel.update_state", "kernel._run"):
        assert calls[once]["per_step"] == 1, once
    # the compiled calls derive their keys (no call per key runs): the first observation and each step draw
    # one of the getter stream, each step two of the bookkeeping stream (push, advance) besides the first
    # observation's, and each reset call one of the reset stream
    key_calls = c.env.key_calls
    assert key_calls[getters.GETTERS] == c.steps + 1 and key_calls[getters.BOOKKEEPING] == 2 * c.steps + 1
    assert 1 <= key_calls[getters.RESETS] <= c.steps + 1
    # the kernel's compiled call is part of update_state, so it cannot take longer
    assert calls["kernel._run"]["us_per_env_step"] <= calls["kernel.update_state"]["us_per_env_step"]
    step_us = report.step_s.mean() * 1e6 / 8
    assert calls["sim.step"]["us_per_env_step"] < step_us
    for owner, method in CALLS:  # the timers are gone: the instances show their classes' methods again
        assert method not in vars(c.env.sim if owner == "sim" else getattr(c, owner))
    assert "calls" not in c.run(1, warmup=0).extra


@pytest.mark.compile
def test_the_check_holds_on_another_numba_cpu_target():
    """The host's machine code and the cost signal's pinned target (x86-64-v3: AVX2, no AVX-512) round
    differently; what the check compares must not depend on it."""
    import os
    import subprocess
    import sys

    from kernels.cost import TARGET

    code = (
        "import kernels\n"
        "from kernels.sim import trajectory\n"
        "for task in kernels.TASKS:\n"
        "    impls = [i for i in kernels.registry.available(task) if i != kernels.REFERENCE]\n"
        "    for c in trajectory.check(task, impls, steps=40, num_envs=12, seed=5, threads=2).values():\n"
        "        print(task, c.impl, c.ok, c.message)\n"
    )
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("NUMBA_CPU")}, **TARGET}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    rows = [line.split(" ", 3) for line in done.stdout.splitlines()]
    assert len(rows) == 6 and all(ok == "True" for _, _, ok, _ in rows), done.stdout
