"""kernels.geometry against MuJoCo's own quaternion functions, in both forms (Numba scalar and NumPy)."""

from __future__ import annotations

import math

import mujoco
import numpy as np
import pytest
from numba import njit

from kernels import geometry as g

ATOL = 1e-6


def random_quats(n: int, seed: int) -> np.ndarray:
    """Unit quaternions with both signs of w, plus the identity and two with w < 0 past a half turn."""
    rng = np.random.default_rng(seed)
    q = rng.normal(size=(n, 4))
    q = np.concatenate([q, [[1.0, 0.0, 0.0, 0.0], [-0.9, 0.1, -0.3, 0.2], [-0.2, 0.6, 0.7, -0.3]]])
    return q / np.linalg.norm(q, axis=1, keepdims=True)


QUATS = random_quats(40, 0)
OTHERS = random_quats(40, 1)
VECS = np.random.default_rng(2).normal(size=(len(QUATS), 3))


def scalar(q: np.ndarray) -> tuple[float, ...]:
    return tuple(float(x) for x in q)


def mj_mul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    res = np.empty(4)
    mujoco.mju_mulQuat(res, a, b)
    return res


def mj_conj(q: np.ndarray) -> np.ndarray:
    res = np.empty(4)
    mujoco.mju_negQuat(res, q)
    return res


def mj_rotate(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    res = np.empty(3)
    mujoco.mju_rotVecQuat(res, v, q)
    return res


def mj_mat(q: np.ndarray) -> np.ndarray:
    res = np.empty(9)
    mujoco.mju_quat2Mat(res, q)
    return res


def mj_angle(a: np.ndarray, b: np.ndarray) -> float:
    """‖mju_subQuat(a, b)‖: the rotation angle of b⁻¹ ⊗ a, in [0, π]."""
    res = np.empty(3)
    mujoco.mju_subQuat(res, a, b)
    return float(np.linalg.norm(res))


def test_quat_mul_and_conj_match_mujoco():
    want_mul = np.array([mj_mul(a, b) for a, b in zip(QUATS, OTHERS, strict=True)])
    want_conj = np.array([mj_conj(q) for q in QUATS])
    np.testing.assert_allclose(g.quat_mul_np(QUATS, OTHERS), want_mul, atol=ATOL)
    np.testing.assert_allclose(g.quat_conj_np(QUATS), want_conj, atol=ATOL)
    for k, (a, b) in enumerate(zip(QUATS, OTHERS, strict=True)):
        np.testing.assert_allclose(g.quat_mul(scalar(a), scalar(b)), want_mul[k], atol=ATOL)
        np.testing.assert_allclose(g.quat_conj(scalar(a)), want_conj[k], atol=ATOL)


def test_rotations_match_mujoco():
    want = np.array([mj_rotate(q, v) for q, v in zip(QUATS, VECS, strict=True)])
    want_inv = np.array([mj_rotate(mj_conj(q), v) for q, v in zip(QUATS, VECS, strict=True)])
    np.testing.assert_allclose(g.quat_rotate_np(QUATS, VECS), want, atol=ATOL)
    np.testing.assert_allclose(g.quat_rotate_inv_np(QUATS, VECS), want_inv, atol=ATOL)
    for k, (q, v) in enumerate(zip(QUATS, VECS, strict=True)):
        np.testing.assert_allclose(g.quat_rotate(scalar(q), scalar(v)), want[k], atol=ATOL)
        np.testing.assert_allclose(g.quat_rotate_inv(scalar(q), scalar(v)), want_inv[k], atol=ATOL)


def test_rotation_matrix_and_6d_match_mujoco():
    want = np.array([mj_mat(q) for q in QUATS])
    want_6d = want[:, [0, 1, 3, 4, 6, 7]]  # first two columns, row-major
    np.testing.assert_allclose(g.quat_to_mat_np(QUATS), want.reshape(-1, 3, 3), atol=ATOL)
    np.testing.assert_allclose(g.quat_to_6d_np(QUATS), want_6d, atol=ATOL)
    for k, (q, v) in enumerate(zip(QUATS, VECS, strict=True)):
        m = g.quat_to_mat(scalar(q))
        np.testing.assert_allclose(m, want[k], atol=ATOL)
        np.testing.assert_allclose(g.quat_to_6d(scalar(q)), want_6d[k], atol=ATOL)
        np.testing.assert_allclose(g.mat_vec(m, scalar(v)), want[k].reshape(3, 3) @ v, atol=ATOL)
        np.testing.assert_allclose(g.mat_t_vec(m, scalar(v)), want[k].reshape(3, 3).T @ v, atol=ATOL)


def test_6d_of_identity():
    identity = np.array([1.0, 0.0, 0.0, 0.0])
    np.testing.assert_array_equal(g.quat_to_6d_np(identity), [1, 0, 0, 1, 0, 0])
    assert g.quat_to_6d(scalar(identity)) == (1.0, 0.0, 0.0, 1.0, 0.0, 0.0)


def test_angles_match_mujoco_sub_quat():
    identity = np.array([1.0, 0.0, 0.0, 0.0])
    want = np.array([mj_angle(a, b) for a, b in zip(QUATS, OTHERS, strict=True)])
    want_single = np.array([mj_angle(q, identity) for q in QUATS])
    np.testing.assert_allclose(g.quat_diff_angle_np(QUATS, OTHERS), want, atol=ATOL)
    np.testing.assert_allclose(g.quat_angle_np(QUATS), want_single, atol=ATOL)
    for k, (a, b) in enumerate(zip(QUATS, OTHERS, strict=True)):
        assert g.quat_diff_angle(scalar(a), scalar(b)) == pytest.approx(want[k], abs=ATOL)
        assert g.quat_angle(scalar(a)) == pytest.approx(want_single[k], abs=ATOL)


@njit(error_model="numpy")
def _branchless_angles(a, b, out):
    for k in range(a.shape[0]):
        out[k] = g.quat_diff_angle_branchless(
            (a[k, 0], a[k, 1], a[k, 2], a[k, 3]), (b[k, 0], b[k, 1], b[k, 2], b[k, 3])
        )


def test_branchless_angle_is_the_angle():
    """The vectorisable angle against quat_diff_angle: random pairs (both signs of w), each quaternion with
    itself (0) and with its negation (the same rotation, 0), and a half turn (pi)."""
    half_turn = np.array([[0.0, 1.0, 0.0, 0.0]])
    a = np.concatenate([QUATS, QUATS, QUATS, half_turn])
    b = np.concatenate([OTHERS, QUATS, -QUATS, [[1.0, 0.0, 0.0, 0.0]]])
    out = np.full(len(a), np.nan)
    _branchless_angles(a, b, out)
    want = np.array([g.quat_diff_angle(scalar(x), scalar(y)) for x, y in zip(a, b, strict=True)])
    np.testing.assert_allclose(out, want, rtol=1e-15, atol=1e-7)  # atol: sqrt of rounding near angle 0
    assert out[-1] == pytest.approx(np.pi, abs=1e-15)


def test_angle_sign_rule():
    """q and −q are the same rotation: the angle is taken with w ≥ 0, so it lies in [0, π]."""
    q = np.array([math.cos(2.5), math.sin(2.5), 0.0, 0.0])  # 5 rad about x, so w < 0
    want = 2 * math.pi - 5.0
    assert mj_angle(q, np.array([1.0, 0.0, 0.0, 0.0])) == pytest.approx(want, abs=ATOL)
    for got in (g.quat_angle(scalar(q)), g.quat_angle(scalar(-q)), g.quat_angle_np(q), g.quat_angle_np(-q)):
        assert float(got) == pytest.approx(want, abs=ATOL)
    angles = g.quat_angle_np(QUATS)
    assert np.all((angles >= 0) & (angles <= math.pi))


def test_yaw_hand_value():
    # q ∝ (1, 2, 3, 4): psi = atan2(2(4 + 6), 30 − 2(9 + 16)) = atan2(20, −20) = 3π/4.
    q = np.array([1.0, 2.0, 3.0, 4.0]) / math.sqrt(30.0)
    want = [math.cos(3 * math.pi / 8), 0.0, 0.0, math.sin(3 * math.pi / 8)]
    np.testing.assert_allclose(g.quat_yaw_np(q), want, atol=ATOL)
    np.testing.assert_allclose(g.quat_yaw(scalar(q)), want, atol=ATOL)


def test_yaw_is_the_heading_of_the_body_x_axis():
    """ψ is the heading of R(q)'s first column, atan2(R10, R00), and yaw(q) is the pure z rotation by ψ."""
    yaw = g.quat_yaw_np(QUATS)
    for k, q in enumerate(QUATS):
        m = mj_mat(q)
        psi = math.atan2(m[3], m[0])
        np.testing.assert_allclose(yaw[k], [math.cos(psi / 2), 0, 0, math.sin(psi / 2)], atol=ATOL)
        np.testing.assert_allclose(g.quat_yaw(scalar(q)), yaw[k], atol=ATOL)


def test_numpy_forms_broadcast():
    one = QUATS[:1]  # (1, 4) against (n, 4)
    np.testing.assert_allclose(g.quat_mul_np(one, OTHERS), [mj_mul(one[0], b) for b in OTHERS], atol=ATOL)
    assert g.quat_rotate_np(QUATS[:, None], VECS[None, :5]).shape == (len(QUATS), 5, 3)
