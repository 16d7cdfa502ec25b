"""The g1_motion NumPy reference on hand-crafted snapshots (spec B2-B5, E3), its synthetic inputs, and a quick
parity check of the hand-written kernel against it (spec E5)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import kernels
from gate.meter import parity
from kernels.geometry import quat_from_euler, quat_mul_np, quat_to_mat_np
from kernels.kernel import max_threads
from kernels.tasks.g1_motion import constants as task
from kernels.tasks.g1_motion import reference as ref
from kernels.tasks.g1_motion.plan import DEFAULT_PLAN
from tests.kernels.snapshots import make_inputs

FRAMES = 3
A = task.ANCHOR
IDENTITY = [1.0, 0.0, 0.0, 0.0]
EXP_TERMS = task.TERMS[:6]


def yaw_quat(psi: float) -> list[float]:
    return [math.cos(psi / 2), 0.0, 0.0, math.sin(psi / 2)]


def crafted(t: int = 1) -> dict[str, np.ndarray]:
    """One env whose robot is exactly reference frame t, at rest in the default pose, with p̃/q̃ equal to frame t
    (the robot anchor is the reference anchor) and noise_u = 0.5 (zero noise at any level)."""
    rng = np.random.default_rng(3)
    nb, nj = task.NUM_BODIES, task.NUM_JOINTS
    quat = rng.normal(size=(FRAMES, nb, 4))
    library = {
        "motion_body_pos_w": rng.normal(0.0, 0.3, (FRAMES, nb, 3)) + np.array([0.0, 0.0, 0.8]),
        "motion_body_quat_w": quat / np.linalg.norm(quat, axis=-1, keepdims=True),
        "motion_body_lin_vel_w": rng.normal(size=(FRAMES, nb, 3)),
        "motion_body_ang_vel_w": rng.normal(size=(FRAMES, nb, 3)),
        "motion_joint_pos": rng.normal(0.0, 0.3, (FRAMES, nj)),
        "motion_joint_vel": rng.normal(size=(FRAMES, nj)),
    }
    arrays = {
        **library,
        "body_pos_w": library["motion_body_pos_w"][[t]],
        "body_quat_w": library["motion_body_quat_w"][[t]],
        "body_lin_vel_w": library["motion_body_lin_vel_w"][[t]],
        "body_ang_vel_w": library["motion_body_ang_vel_w"][[t]],
        "joint_pos": task.DEFAULT_POSE[None],
        "joint_vel": np.zeros((1, nj)),
        "actions": np.zeros((1, nj)),
        "last_actions": np.zeros((1, nj)),
        "time_steps": [t],
        "noise_u": np.full((1, task.NOISE_DIM), 0.5),
        "rel_body_pos": library["motion_body_pos_w"][[t]],
        "rel_body_quat": library["motion_body_quat_w"][[t]],
    }
    return {s.name: np.array(arrays[s.name], dtype=s.dtype) for s in task.CONTRACT.snapshot}


def run(snap: dict[str, np.ndarray], impl: str = "numpy", noise_level: float = 1.0) -> dict[str, np.ndarray]:
    k = kernels.load("g1_motion", impl, num_envs=len(snap["time_steps"]), noise_level=noise_level)
    return {name: arr.copy() for name, arr in k.update_state(snap).items()}


def terms(out: dict[str, np.ndarray]) -> dict[str, float]:
    return dict(zip(task.TERMS, out["term_means"], strict=True))


def block(out: dict[str, np.ndarray], which: str, name: str) -> np.ndarray:
    """Env 0's ``name`` block of ``obs`` or ``critic_obs``."""
    cols, widths = {
        "obs": (task.OBS_COLUMNS, task.OBS_BLOCKS),
        "critic_obs": (task.CRITIC_OBS_COLUMNS, task.CRITIC_OBS_BLOCKS),
    }[which]
    return out[which][0, cols[name] : cols[name] + widths[name]]


def fired(snap: dict[str, np.ndarray]) -> set[str]:
    step = ref.make_step(snap)
    return {t.name for t in DEFAULT_PLAN.terminations if ref.TERMINATIONS[t.fn](step, t.params)[0]}


# --- rewards and terminations (stage 1) ---------------------------------------------------------------------


def test_robot_on_its_reference_scores_one_and_is_not_done():
    out = run(crafted())
    f = terms(out)
    for name in EXP_TERMS:
        assert f[name] == pytest.approx(1.0, abs=1e-6), name
    assert f["action_rate_l2"] == 0.0 and f["joint_limit"] == 0.0
    assert out["done"][0] == 0
    assert out["reward"][0] == pytest.approx(task.DT * 5.0)  # 0.5 + 0.5 + 4 x 1.0


def test_anchor_offset_of_0_3_m_in_x():
    snap = crafted()
    snap["body_pos_w"][0, A, 0] += 0.3
    f = terms(run(snap))
    assert f["motion_global_anchor_pos"] == pytest.approx(math.exp(-(0.3**2) / 0.3**2), rel=1e-5)
    one_of_14 = math.exp(-(0.3**2) / 14 / 0.3**2)
    assert f["motion_body_pos"] == pytest.approx(one_of_14, rel=1e-5)


def shift_z(body: int, sign: float):
    def mutate(snap: dict[str, np.ndarray], dz: float) -> None:
        snap["body_pos_w"][0, body, 2] += sign * dz

    return mutate


def tilt_anchor(snap: dict[str, np.ndarray], gap: float) -> None:
    """Reference anchor upright at frame t; robot anchor rolled so that R22 = −(Rᵀg)_z is ``gap`` lower."""
    snap["motion_body_quat_w"][snap["time_steps"][0], A] = IDENTITY
    snap["body_quat_w"][0, A] = quat_from_euler(np.arccos(1.0 - gap), 0.0, 0.0)


@pytest.mark.parametrize(
    ("termination", "mutate"),
    [
        ("anchor_pos", shift_z(A, 1.0)),
        ("anchor_pos", shift_z(A, -1.0)),
        ("ee_body_pos", shift_z(3, 1.0)),
        ("ee_body_pos", shift_z(13, -1.0)),
        ("anchor_ori", tilt_anchor),
    ],
)
def test_each_termination_fires_alone_just_past_its_threshold(termination, mutate):
    threshold = task.TERMINATION_THRESHOLDS[termination]
    past, short = crafted(), crafted()
    mutate(past, threshold + 0.01)
    mutate(short, threshold - 0.01)
    assert fired(past) == {termination}
    assert run(past)["done"][0] == 1
    assert fired(short) == set()
    assert run(short)["done"][0] == 0


def test_joint_limit_and_action_rate_hand_values():
    snap = crafted()
    # Soft limits, factor 0.9: centre ± 0.45 * width of jnt_range.
    hip_pitch_hi = (-2.5307 + 2.8798) / 2 + 0.45 * (2.8798 + 2.5307)
    knee_lo = (-0.087267 + 2.8798) / 2 - 0.45 * (2.8798 + 0.087267)
    snap["joint_pos"][0, 0] = hip_pitch_hi + 0.1
    snap["joint_pos"][0, 3] = knee_lo - 0.05
    snap["actions"][0, :2] = [0.5, -0.2]
    out = run(snap)
    f = terms(out)
    assert f["joint_limit"] == pytest.approx(0.15, abs=1e-5)
    assert f["action_rate_l2"] == pytest.approx(0.29, abs=1e-6)
    assert out["reward"][0] == pytest.approx(task.DT * (5.0 - 0.1 * 0.29 - 10.0 * 0.15), abs=1e-6)


def test_rewards_see_the_incoming_rel_bodies_not_the_updated_ones():
    snap = crafted()
    snap["body_pos_w"][0] += [0.4, -0.2, 0.0]
    snap["body_quat_w"][0] = quat_mul_np(yaw_quat(0.7), snap["body_quat_w"][0])
    snap["rel_body_pos"][...] = snap["body_pos_w"]
    snap["rel_body_quat"][...] = snap["body_quat_w"]
    f = terms(run(snap))
    assert f["motion_body_pos"] == pytest.approx(1.0, abs=1e-6)
    assert f["motion_body_ori"] == pytest.approx(1.0, abs=1e-6)
    assert f["motion_global_anchor_pos"] < 0.5  # the global anchor terms do see the shift


# --- rel bodies (stage 2) and observations (stage 3) -------------------------------------------------------


def test_rel_bodies_are_frame_t_plus_1_moved_onto_the_current_robot_anchor():
    snap = crafted(t=0)
    snap["motion_body_pos_w"][1, A] = [1.0, 2.0, 0.8]
    snap["motion_body_quat_w"][1, A] = IDENTITY
    snap["motion_body_pos_w"][1, 0] = [1.5, 2.0, 0.3]
    snap["motion_body_quat_w"][1, 0] = quat_from_euler(0.4, 0.0, 0.0)
    snap["body_pos_w"][0, A] = [0.0, 0.0, 0.5]
    snap["body_quat_w"][0, A] = yaw_quat(math.pi / 2)
    run(snap)
    # Δq = yaw(q^r_a ⊗ (q^m_a)⁻¹) = 90° about z; Δp = (0, 0, 0.8); p̃_0 = Δp + R(Δq) (0.5, 0, -0.5).
    np.testing.assert_allclose(snap["rel_body_pos"][0, A], [0.0, 0.0, 0.8], atol=1e-6)
    np.testing.assert_allclose(snap["rel_body_quat"][0, A], yaw_quat(math.pi / 2), atol=1e-6)
    np.testing.assert_allclose(snap["rel_body_pos"][0, 0], [0.0, 0.5, 0.3], atol=1e-6)
    want = quat_mul_np(yaw_quat(math.pi / 2), quat_from_euler(0.4, 0.0, 0.0))
    np.testing.assert_allclose(snap["rel_body_quat"][0, 0], want, atol=1e-6)


@pytest.mark.parametrize(("t", "t_next"), [(0, 1), (1, 2), (FRAMES - 1, FRAMES - 1)])
def test_stage_2_and_3_use_frame_min_t_plus_1_last(t, t_next):
    snap = crafted(t)
    snap["body_pos_w"][0] = snap["motion_body_pos_w"][t_next]  # robot anchor on frame t': p̃/q̃ = frame t'
    snap["body_quat_w"][0] = snap["motion_body_quat_w"][t_next]
    out = run(snap)
    np.testing.assert_allclose(snap["rel_body_pos"][0], snap["motion_body_pos_w"][t_next], atol=1e-6)
    np.testing.assert_allclose(snap["rel_body_quat"][0], snap["motion_body_quat_w"][t_next], atol=1e-6)
    command = np.concatenate([snap["motion_joint_pos"][t_next], snap["motion_joint_vel"][t_next]])
    np.testing.assert_array_equal(out["obs"][0, :58], command)
    np.testing.assert_array_equal(out["critic_obs"][0, :58], command)


def test_observation_layout_spot_checks():
    snap = crafted(t=0)
    snap["body_pos_w"][0, A] = [0.0, 0.0, 0.8]
    snap["body_quat_w"][0, A] = yaw_quat(math.pi / 2)
    snap["motion_body_pos_w"][1, A] = [1.0, 0.0, 0.8]
    snap["motion_body_quat_w"][1, A] = yaw_quat(math.pi / 2)
    snap["body_quat_w"][0, task.ROOT] = yaw_quat(math.pi / 2)
    snap["body_lin_vel_w"][0, task.ROOT] = [1.0, 0.0, 0.0]
    snap["joint_pos"][0] = task.DEFAULT_POSE + 0.1
    snap["actions"][0] = np.linspace(-1, 1, task.NUM_JOINTS)
    out = run(snap)
    for which in ("obs", "critic_obs"):
        np.testing.assert_allclose(block(out, which, "motion_anchor_pos_b"), [0.0, -1.0, 0.0], atol=1e-6)
        np.testing.assert_allclose(block(out, which, "motion_anchor_ori_b"), [1, 0, 0, 1, 0, 0], atol=1e-6)
        np.testing.assert_allclose(block(out, which, "base_lin_vel"), [0.0, -1.0, 0.0], atol=1e-6)
        np.testing.assert_allclose(block(out, which, "joint_pos"), 0.1, atol=1e-6)
        np.testing.assert_array_equal(block(out, which, "actions"), snap["actions"][0])
    anchor_pos = block(out, "critic_obs", "body_pos").reshape(-1, 3)[A]
    anchor_ori = block(out, "critic_obs", "body_ori").reshape(-1, 6)[A]
    np.testing.assert_allclose(anchor_pos, 0.0, atol=1e-6)
    np.testing.assert_allclose(anchor_ori, [1, 0, 0, 1, 0, 0], atol=1e-6)


@pytest.mark.parametrize("noise_level", [0.0, 1.0, 2.0])
def test_actor_noise_is_x_plus_level_times_2u_minus_1_times_scale(noise_level):
    snap = crafted()
    snap["noise_u"][...] = 0.75  # 2u − 1 = 0.5
    out = run(snap, noise_level=noise_level)
    for name, scale in task.NOISE_SCALES.items():
        actor, clean = block(out, "obs", name), block(out, "critic_obs", name)
        np.testing.assert_allclose(actor - clean, noise_level * 0.5 * scale, atol=1e-6)
        if noise_level == 0.0:
            np.testing.assert_array_equal(actor, clean)


@pytest.mark.parametrize("impl", ["numpy", "handwritten"])
@pytest.mark.parametrize("t", [-1, FRAMES])
def test_time_steps_outside_the_library_are_refused_before_anything_is_touched(impl, t):
    snap = crafted()
    snap["time_steps"][0] = t
    before = kernels.copy_snapshot(snap)
    k = kernels.load("g1_motion", impl, num_envs=1)
    parity.poison(k.outputs)
    with pytest.raises(
        ValueError,
        match=r"'time_steps' holds frame indexes, so its values must lie in \[0, T - 1\] = \[0, 2\]",
    ):
        k.update_state(snap)
    assert np.isnan(k.outputs["reward"]).all() and (k.outputs["done"] == 255).all()
    for name, arr in before.items():
        np.testing.assert_array_equal(snap[name], arr)


# --- synthetic snapshot (spec E4) -------------------------------------------------------------------------


def test_synthetic_snapshot_is_plausible_and_clear_of_thresholds():
    snap = make_inputs("g1_motion", 5000, seed=4)
    again = make_inputs("g1_motion", 5000, seed=4)
    assert all(np.array_equal(snap[k], again[k]) for k in snap)
    assert snap["motion_joint_pos"].shape[0] == 500
    t = snap["time_steps"]
    assert t.min() == 0 and (t == 499).any()
    for name in ("body_quat_w", "rel_body_quat", "motion_body_quat_w"):
        np.testing.assert_allclose(np.linalg.norm(snap[name], axis=-1), 1.0, atol=1e-6)
    assert ((snap["noise_u"] >= 0) & (snap["noise_u"] < 1)).all()
    s = ref.make_step(snap)
    thresholds = task.TERMINATION_THRESHOLDS
    ee = list(task.END_EFFECTORS)
    up_z = quat_to_mat_np(s.ref.quat[:, A])[:, 2, 2], quat_to_mat_np(s.robot.quat[:, A])[:, 2, 2]
    gaps = {
        "anchor_pos": np.abs(s.ref.pos[:, A, 2] - s.robot.pos[:, A, 2]),
        "anchor_ori": np.abs(up_z[0] - up_z[1]),
        "ee_body_pos": np.abs(s.rel_pos[:, ee, 2] - s.robot.pos[:, ee, 2]),
    }
    for name, gap in gaps.items():
        assert np.abs(gap - thresholds[name]).min() > 1e-3, name
    done = np.any([ref.TERMINATIONS[t.fn](s, t.params) for t in DEFAULT_PLAN.terminations], axis=0)
    assert 0.01 < done.mean() < 0.035


# --- parity of the hand-written kernel (spec E5) -----------------------------------------------------------


@pytest.mark.parametrize("noise_level", [0.0, 1.0])
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("num_envs", [1, 7, 1000])
def test_handwritten_matches_the_reference(num_envs, threads, noise_level):
    if threads > max_threads():
        pytest.skip(f"Numba has {max_threads()} threads here")
    report = parity.compare(
        task="g1_motion",
        impl="handwritten",
        num_envs=num_envs,
        seed=num_envs + threads,
        threads=threads,
        noise_level=noise_level,
    )
    assert report.ok, [a for a in report.arrays if not a.ok]
