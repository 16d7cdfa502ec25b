"""Random sub-plans of g1_motion: assembled and assembled_generic equal the plan-driven reference (spec E5).

Every new plan compiles a new ``assembled`` kernel (several seconds), so the property test draws few examples and
is derandomized: the same plans each run, so their compiled kernels are reused from the on-disk cache.
"""

import subprocess
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kernels
from gate.meter import parity
from kernels.spec import ObservationGroup, ObservationTerm, PlanError, RewardTerm, TerminationTerm
from kernels.tasks.g1_motion import assembled as assembled_motion
from kernels.tasks.g1_motion import constants as task
from kernels.tasks.g1_motion import plan as motion_plan
from kernels.tasks.g1_motion import reference as ref
from tests.conftest import examples
from tests.kernels.snapshots import make_inputs

LIB = motion_plan.LIBRARY
REWARDS = list(LIB["reward"])
TERMINATIONS = list(LIB["termination"])
OBSERVATIONS = list(LIB["observation"])
DEFAULT = motion_plan.DEFAULT_PLAN
N = 37


def _obs_term(draw, name: str) -> ObservationTerm:
    if LIB["observation"][name].noise_column is None or not draw(st.booleans()):
        return ObservationTerm(name=name)
    return ObservationTerm(name=name, noise=draw(st.sampled_from([task.NOISE_SCALES[name], 0.3])))


@st.composite
def sub_plans(draw):
    rewards = []
    for name in draw(st.lists(st.sampled_from(REWARDS), unique=True)):  # a random subset in a random order
        params = (
            {"std": draw(st.floats(0.1, 5.0))} if LIB["reward"][name].params is motion_plan.ExpKernel else {}
        )
        weight = draw(st.floats(-20.0, 20.0, allow_nan=False))
        rewards.append(RewardTerm(name=f"r_{name}", fn=name, weight=weight, params=params))
    terminations = [
        TerminationTerm(name=name, params={"threshold": draw(st.floats(0.05, 1.0))})
        for name in draw(st.lists(st.sampled_from(TERMINATIONS), unique=True))
    ]
    actor = draw(st.lists(st.sampled_from(OBSERVATIONS), unique=True))
    groups = [ObservationGroup(name="actor", terms=tuple(_obs_term(draw, name) for name in actor))]
    second = draw(st.sampled_from(["none", "separate", "includes"]))
    if second == "separate":
        critic = draw(st.lists(st.sampled_from(OBSERVATIONS), unique=True, min_size=1))
        groups.append(ObservationGroup(name="critic", terms=tuple(_obs_term(draw, name) for name in critic)))
    elif second == "includes":
        rest = [name for name in OBSERVATIONS if name not in actor]
        critic = draw(st.lists(st.sampled_from(rest), unique=True)) if rest else []
        groups.append(
            ObservationGroup(name="critic", include="actor", terms=tuple(_obs_term(draw, n) for n in critic))
        )
    level = draw(st.sampled_from([0.0, 0.5, 1.0]))
    return motion_plan.build(
        rewards=rewards, terminations=terminations, observations=groups, noise_level=level
    )


@settings(
    max_examples=examples(15), deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
@given(plan=sub_plans(), seed=st.integers(0, 2**16), threads=st.sampled_from([1, 2]))
def test_assembled_kernels_match_the_reference_on_sub_plans(plan, seed, threads):
    snap = make_inputs("g1_motion", N, seed)
    for impl in ("assembled", "assembled_generic"):
        report = parity.compare_on(snap, task="g1_motion", impl=impl, plan=plan, threads=threads, seed=seed)
        assert report.ok, (impl, plan.to_dict(), [a for a in report.arrays if not a.ok])


def test_reference_follows_the_plan():
    """A term keeps its value whatever else the plan holds, a group is its blocks in the plan's order, and p̃/q̃
    (state) are updated by every plan."""
    snap = make_inputs("g1_motion", 64, 2)
    full_snap, sub_snap = kernels.copy_snapshot(snap), kernels.copy_snapshot(snap)
    full = kernels.load("g1_motion", "numpy", num_envs=64).update_state(full_snap)
    limit = DEFAULT.rewards[7]
    plan = DEFAULT.replace(
        rewards=[limit, RewardTerm(name="ori", fn="motion_body_ori", weight=2.0, params={"std": 0.4})],
        terminations=[],
        observations=[
            ObservationGroup(
                name="policy", terms=(ObservationTerm(name="actions"), ObservationTerm(name="command"))
            )
        ],
    )
    sub = kernels.load("g1_motion", "numpy", num_envs=64, plan=plan).update_state(sub_snap)
    assert list(sub) == ["reward", "done", "policy", "term_means"]
    np.testing.assert_array_equal(sub["term_means"], full["term_means"][[7, 3]])
    assert full["done"].any() and not sub["done"].any()
    values = {r.name: ref.REWARD_TERMS[r.fn](ref.make_step(snap), r.params) for r in plan.rewards}
    want = plan.dt * (limit.weight * values["joint_limit"] + 2.0 * values["ori"])
    np.testing.assert_allclose(sub["reward"], want, rtol=1e-6, atol=1e-7)
    np.testing.assert_array_equal(sub["policy"][:, :29], snap["actions"])
    np.testing.assert_array_equal(sub["policy"][:, 29:], full["critic_obs"][:, :58])
    for name in ("rel_body_pos", "rel_body_quat"):
        np.testing.assert_array_equal(sub_snap[name], full_snap[name])


@pytest.mark.compile
def test_assembled_runs_a_library_term_twice_and_generic_refuses():
    twice = RewardTerm(name="body_pos_wide", fn="motion_body_pos", weight=0.25, params={"std": 1.5})
    plan = DEFAULT.replace(rewards=[*DEFAULT.rewards, twice])
    report = parity.compare(task="g1_motion", impl="assembled", num_envs=N, seed=1, plan=plan)
    assert report.ok, [a for a in report.arrays if not a.ok]
    assert assembled_motion.generate(plan).count("pos_err += ") == 1  # the shared error is computed once
    with pytest.raises(
        ValueError, match=r"at most once per plan; \['motion_body_pos'\] appear more than once"
    ):
        kernels.load("g1_motion", "assembled_generic", num_envs=4, plan=plan)


def _kernel_body(source: str) -> str:
    return source.split("def update_state_kernel", 1)[1]


def test_default_source_has_literals_and_no_runtime_lookups():
    source = assembled_motion.generate(DEFAULT)
    for lookup in ("weights[", "active[", "params[", "route", "noise_scale", "thresholds[", "workspace"):
        assert lookup not in source
    assert "reward[i] = DT * (0.5 * f0 + 0.5 * f1 + 1.0 * f2" in source
    assert "-0.1 * f6 + -10.0 * f7)" in source
    assert "f0 = math.exp(-sq_norm3(anchor_err) * 11.11111111111111)" in source  # 1 / 0.3^2
    assert "(abs(anchor_err[2]) > 0.25)" in source
    assert "out_critic_obs[i, 199 + j] = dq" in source  # offsets are literals
    assert "out_obs[i, 73 + j] = dq + (0.02 * noise_u[i, 15 + j] - 0.01)" in source  # so is the noise
    # The bodies: a gather loop and a store loop around one vectorised lane pass; the joints: one loop.
    assert source.count("for b in range(NB):") == 2 and source.count("for b in range(LANES):") == 1
    assert source.count("for j in range(NJ):") == 1
    quiet = assembled_motion.generate(DEFAULT.replace(noise_level=0.0))
    assert "noise_u[" not in _kernel_body(quiet)


def test_source_holds_only_what_the_plan_needs():
    plan = DEFAULT.replace(
        rewards=[r for r in DEFAULT.rewards if r.fn in ("motion_body_pos", "action_rate_l2")],
        terminations=[t for t in DEFAULT.terminations if t.fn == "anchor_pos"],
        observations=[ObservationGroup(name="obs", terms=(ObservationTerm(name="base_ang_vel", noise=0.2),))],
    )
    body = _kernel_body(assembled_motion.generate(plan))
    for absent in (
        "ori_err",
        "lin_err",
        "ang_err",
        "anchor_angle",
        "limit",
        "body_ori_b",
        "body_pos_b",
        "ra =",
        "rel_pos[i, 3, 2]",
        "motion_joint_pos[",
        "qa_inv",
    ):
        assert absent not in body, absent
    for present in (
        "pos_err += ",
        "rate += ",
        "rel_pos[i, b, 2] = ",
        "rel_quat[i, b, 3] = ",
        "out_obs[i, 2] = ang_vel_b[2] + (0.4 * noise_u[i, 14] - 0.2)",
    ):
        assert present in body, present


@pytest.mark.compile
@pytest.mark.parametrize(
    ("impl", "dispatcher"),
    [("assembled", "k.module.update_state_kernel"), ("assembled_generic", "generic_motion.generic_kernel")],
)
def test_a_cached_kernel_loads_without_compiling_in_a_fresh_process(impl, dispatcher):
    code = (
        "import kernels\n"
        "from kernels.tasks.g1_motion import generic as generic_motion\n"
        f"k = kernels.load('g1_motion', {impl!r}, num_envs=16)\n"
        "from kernels.tasks.g1_motion.meter import make_inputs\n"
        "k.update_state(make_inputs(16, 0))\n"
        f"stats = {dispatcher}.stats\n"
        "print(len(stats.cache_hits), len(stats.cache_misses))\n"
    )
    for _ in range(2):  # the first run may compile; the second must load from the cache
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    hits, misses = map(int, out.split())
    assert hits >= 1 and misses == 0


def test_generic_refuses_what_it_cannot_route():
    groups = [ObservationGroup(name=f"g{k}", terms=(ObservationTerm(name="actions"),)) for k in range(3)]
    plan = DEFAULT.replace(observations=groups)
    with pytest.raises(ValueError, match="routes at most 2 observation groups; this plan has 3"):
        kernels.load("g1_motion", "assembled_generic", num_envs=4, plan=plan)
    assert kernels.load("g1_motion", "assembled", num_envs=4, plan=plan).outputs["g2"].shape == (4, 29)
    repeated = ObservationGroup(name="critic", include="obs", terms=(ObservationTerm(name="actions"),))
    plan = DEFAULT.replace(observations=[DEFAULT.observations[0], repeated])
    with pytest.raises(ValueError, match="'actions' appears twice in 'critic'"):
        kernels.load("g1_motion", "assembled_generic", num_envs=4, plan=plan)


def test_handwritten_refuses_other_plans():
    plan = DEFAULT.replace(rewards=DEFAULT.rewards[:-1])
    with pytest.raises(ValueError, match="implements only the default plan"):
        kernels.load("g1_motion", "handwritten", num_envs=8, plan=plan)


def test_an_exp_kernel_without_width_is_refused():
    zero = RewardTerm(name="motion_body_pos", weight=1.0, params={"std": 0.0})
    with pytest.raises(
        PlanError, match=r"reward term 'motion_body_pos': parameter 'std' must be > 0.0, got 0.0"
    ):
        DEFAULT.replace(rewards=[zero])
