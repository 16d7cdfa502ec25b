"""Term plans: validation errors name the term, default plans equal spec E, hashes are stable."""

import dataclasses
import subprocess
import sys

import pytest

import kernels
from kernels import registry
from kernels.spec import ObservationGroup, ObservationTerm, PlanError, RewardTerm, TerminationTerm
from kernels.tasks.g1_motion import constants as g1_motion
from kernels.tasks.g1_walk import constants as g1_walk
from kernels.tasks.g1_walk import plan as walk_plan


@pytest.mark.parametrize("task", kernels.TASKS)
def test_default_plans_are_spec_e(task):
    plan = registry.default_plan(task)
    contract = registry.contract(task)
    assert plan.reward_names == contract.terms
    assert contract.for_plan(plan) == contract  # same outputs, shapes and dtypes as the spec E contract
    module = registry.task_module(task)
    assert [r.weight for r in plan.rewards] == list(module.REWARD_SCALES.values())
    assert plan.noise_level == module.NOISE_LEVEL
    assert plan.dt == module.DT


def test_walk_default_plan_layout():
    plan = walk_plan.DEFAULT_PLAN
    assert plan.width("obs") == g1_walk.OBS_DIM
    assert plan.width("privileged_obs") == g1_walk.PRIVILEGED_OBS_DIM
    columns = {o.name: c for o, c in plan.layout("privileged_obs")[8:]}
    assert columns["gyro"] == g1_walk.PRIV_GYRO
    assert columns["feet_air_time"] == g1_walk.PRIV_AIR_TIME


def test_motion_default_plan_layout():
    plan = registry.default_plan("g1_motion")
    assert {o.name: c for o, c in plan.layout("obs")} == g1_motion.OBS_COLUMNS
    assert {o.name: c for o, c in plan.layout("critic_obs")} == g1_motion.CRITIC_OBS_COLUMNS


def test_hash_is_stable_across_processes_and_sensitive_to_content():
    plan = walk_plan.DEFAULT_PLAN
    code = "from kernels.tasks.g1_walk.plan import DEFAULT_PLAN; print(DEFAULT_PLAN.hash)"
    other = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert other == plan.hash
    assert plan.replace(noise_level=0.0).hash != plan.hash
    reweighted = [
        dataclasses.replace(r, weight=r.weight * 2) if r.name == "pose" else r for r in plan.rewards
    ]
    assert plan.replace(rewards=reweighted).hash != plan.hash
    assert plan.replace(rewards=plan.rewards).hash == plan.hash


def _rewards(*extra, drop=()):
    return [r for r in walk_plan.DEFAULT_PLAN.rewards if r.name not in drop] + list(extra)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"rewards": _rewards(RewardTerm(name="jump", weight=1.0))}, "unknown reward term 'jump'"),
        (
            {
                "rewards": _rewards(
                    RewardTerm(name="x", fn="tracking_lin_vel", weight=1.0, params={"sigmaa": 1})
                )
            },
            "reward term 'x' has no parameter 'sigmaa'; its parameters are: sigma",
        ),
        (
            {
                "rewards": _rewards(
                    RewardTerm(name="y", fn="feet_phase", weight=1.0, params={"sigma": "wide"})
                )
            },
            "reward term 'y': parameter 'sigma' must be a number, got 'wide'",
        ),
        ({"rewards": _rewards(RewardTerm(name="pose", weight=1.0))}, "duplicate reward name 'pose'"),
        (
            {"rewards": _rewards(RewardTerm(name="z", fn="pose", weight=float("nan")))},
            "reward term 'z': weight must be finite, got nan",
        ),
        (
            {"rewards": _rewards(RewardTerm(name="dof_acc", weight=-1.0))},
            "needs qacc, which the task's snapshot",
        ),
        ({"terminations": [TerminationTerm(name="fell_over")]}, "unknown termination term 'fell_over'"),
        (
            {
                "observations": [
                    ObservationGroup(name="obs", terms=(ObservationTerm(name="command", noise=0.1),))
                ]
            },
            "observation 'command' (command) has no noise column",
        ),
        (
            {"observations": [ObservationGroup(name="p", include="obs", terms=())]},
            "includes 'obs', which must be a group listed before it",
        ),
        ({"noise_level": float("inf")}, "noise_level must be finite"),
        (
            {
                "rewards": _rewards(
                    RewardTerm(name="w", fn="tracking_ang_vel", weight=1.0, params={"sigma": 0})
                )
            },
            "reward term 'w': parameter 'sigma' must be > 0.0, got 0",
        ),
        (
            {"observations": [ObservationGroup(name="reward", terms=(ObservationTerm(name="command"),))]},
            "observation group name 'reward' must be a Python identifier other than done, reward, term_means",
        ),
        (
            {"observations": [ObservationGroup(name="my obs", terms=(ObservationTerm(name="command"),))]},
            "observation group name 'my obs' must be a Python identifier",
        ),
        ({"noise_level": -0.5}, "noise_level must be >= 0.0"),
    ],
)
def test_invalid_plans_are_refused_naming_the_term(change, message):
    with pytest.raises(PlanError, match=message.replace("(", r"\(").replace(")", r"\)")):
        walk_plan.DEFAULT_PLAN.replace(**change)


def test_missing_parameter_is_refused():
    from kernels.tasks.g1_motion import plan as g1_motion_plan

    bad = [RewardTerm(name="motion_body_pos", weight=1.0)]  # std has no default
    with pytest.raises(PlanError, match="reward term 'motion_body_pos' is missing parameter 'std'"):
        g1_motion_plan.DEFAULT_PLAN.replace(rewards=bad)


def test_params_become_typed():
    plan = walk_plan.DEFAULT_PLAN.replace(
        rewards=[RewardTerm(name="track", fn="tracking_lin_vel", weight=1, params={"sigma": 1})]
    )
    (reward,) = plan.rewards
    assert reward.params == walk_plan.Tracking(sigma=1.0)
    assert isinstance(reward.params.sigma, float) and isinstance(reward.weight, float)


def test_handwritten_refuses_other_plans():
    plan = walk_plan.DEFAULT_PLAN.replace(rewards=_rewards(drop=("pose",)))
    with pytest.raises(ValueError, match="implements only the default plan"):
        kernels.load("g1_walk", "handwritten", num_envs=8, plan=plan)
    # A different noise level is still the default plan for the hand-written kernels.
    assert kernels.load("g1_walk", "handwritten", num_envs=8, noise_level=0.0).noise_level == 0.0
