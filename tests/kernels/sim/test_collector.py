"""The end-to-end collector, for every task x implementation of the registry."""

from __future__ import annotations

import numpy as np
import pytest

import kernels
from gate.meter import trajectory
from kernels.sim.collector import Collector
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


def test_the_same_seed_gives_the_same_trajectory_on_any_thread_count_and_another_seed_does_not():
    a, b = _rollout("g1_walk", "handwritten", 8), _rollout("g1_walk", "handwritten", 8, threads=1)
    np.testing.assert_array_equal(a["obs"], b["obs"])
    np.testing.assert_array_equal(a["reward"], b["reward"])
    other = _rollout("g1_walk", "handwritten", 8, seed=6)
    assert not np.array_equal(a["obs"], other["obs"])


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
