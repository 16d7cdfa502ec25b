"""Quaternion and rotation helpers shared by every implementation (quaternions are (w, x, y, z), unit norm).

Each formula is written once, on components (a tuple of floats or a tuple of arrays), and comes in two forms:

- ``quat_mul`` etc.: Numba scalar versions for ``prange`` kernels. Arguments and results are tuples of floats
  (a quaternion is a 4-tuple, a vector a 3-tuple, a rotation matrix a row-major 9-tuple), so nothing is
  allocated, and LLVM inlines them into the caller (numba's IR-level ``inline="always"`` gave the same
  speed for 40% more compile time).
- ``quat_mul_np`` etc.: vectorised NumPy versions for the reference, on ``(..., 4)`` / ``(..., 3)`` arrays that
  broadcast against each other.

The three composites (inverse rotation, angle between two quaternions, 6D code) are composed from the formulas in
each form. ``quat_diff_angle_branchless`` is the scalar angle with the branch-free atan2 of ``kernels.scalar``
instead of libm's, for the loops LLVM should vectorise; it is inlined at Numba's IR level, so that its caller's
error model applies. ``mat_vec`` / ``mat_t_vec`` exist only as scalars: kernels rotate many vectors by one matrix,
the reference rotates with quaternions; so do the kernels' gathers (``vec3_at``, ``quat_at``) and the small vector
helpers ``sub3`` / ``sq_norm3``. The inverse of a unit quaternion is its conjugate; nothing here normalises.
"""

from __future__ import annotations

import numpy as np
from numba import njit

import kernels._cache  # noqa: F401  (Numba's cache is configured before a kernel is defined)
from kernels.scalar import atan2_nonneg


def _scalar(formula):
    """The Numba scalar version of a component formula."""
    return njit(cache=True)(formula)


def _components(a: np.ndarray) -> tuple[np.ndarray, ...]:
    """Split the last axis of an array into a tuple of arrays (the formulas' components)."""
    return tuple(np.moveaxis(np.asarray(a), -1, 0))


def _stack(parts: tuple) -> np.ndarray:
    """Join components (arrays or scalars that broadcast together) into a last axis."""
    return np.stack(np.broadcast_arrays(*parts), axis=-1)


# --- component formulas -----------------------------------------------------------------------------------


def _quat_mul(a, b):
    """The Hamilton product a ⊗ b."""
    aw, ax, ay, az = a
    bw, bx, by, bz = b
    return (
        aw * bw - ax * bx - ay * by - az * bz,
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw,
    )


def _quat_conj(q):
    """The conjugate, which is the inverse of a unit quaternion."""
    w, x, y, z = q
    return (w, -x, -y, -z)


def _quat_rotate(q, v):
    """R(q) v, as v + w t + u × t with u the vector part of q and t = 2 u × v."""
    w, x, y, z = q
    vx, vy, vz = v
    tx = 2.0 * (y * vz - z * vy)
    ty = 2.0 * (z * vx - x * vz)
    tz = 2.0 * (x * vy - y * vx)
    return (
        vx + w * tx + (y * tz - z * ty),
        vy + w * ty + (z * tx - x * tz),
        vz + w * tz + (x * ty - y * tx),
    )


def _quat_yaw(q):
    """yaw(q) = (cos(ψ/2), 0, 0, sin(ψ/2)) with ψ = atan2(2(wz + xy), 1 − 2(y² + z²)) (spec B2)."""
    w, x, y, z = q
    psi = np.arctan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))
    return (np.cos(0.5 * psi), 0.0, 0.0, np.sin(0.5 * psi))


def _quat_angle(q):
    """‖axis-angle(q)‖ in [0, π]: q is flipped to w ≥ 0 first, so the angle is 2 atan2(‖xyz‖, |w|)."""
    w, x, y, z = q
    return 2.0 * np.arctan2(np.sqrt(x * x + y * y + z * z), np.abs(w))


def _quat_from_euler(roll, pitch, yaw):
    """The ZYX rotation yaw * pitch * roll as a quaternion (w,x,y,z)."""
    cr, sr = np.cos(roll / 2), np.sin(roll / 2)
    cp, sp = np.cos(pitch / 2), np.sin(pitch / 2)
    cy, sy = np.cos(yaw / 2), np.sin(yaw / 2)
    return (
        cr * cp * cy + sr * sp * sy,
        sr * cp * cy - cr * sp * sy,
        cr * sp * cy + sr * cp * sy,
        cr * cp * sy - sr * sp * cy,
    )


R22 = 8  # index of R[2, 2] in a row-major 9-tuple: (R(q)ᵀ g)_z = −R22 for g = (0, 0, −1)


def _quat_to_mat(q):
    """R(q), row-major: (R00, R01, R02, R10, ..., R22)."""
    w, x, y, z = q
    return (
        1.0 - 2.0 * (y * y + z * z),
        2.0 * (x * y - w * z),
        2.0 * (x * z + w * y),
        2.0 * (x * y + w * z),
        1.0 - 2.0 * (x * x + z * z),
        2.0 * (y * z - w * x),
        2.0 * (x * z - w * y),
        2.0 * (y * z + w * x),
        1.0 - 2.0 * (x * x + y * y),
    )


def _mat_vec(m, v):
    """M v for a row-major 3x3 9-tuple M."""
    vx, vy, vz = v
    return (
        m[0] * vx + m[1] * vy + m[2] * vz,
        m[3] * vx + m[4] * vy + m[5] * vz,
        m[6] * vx + m[7] * vy + m[8] * vz,
    )


def _mat_t_vec(m, v):
    """Mᵀ v for a row-major 3x3 9-tuple M."""
    vx, vy, vz = v
    return (
        m[0] * vx + m[3] * vy + m[6] * vz,
        m[1] * vx + m[4] * vy + m[7] * vz,
        m[2] * vx + m[5] * vy + m[8] * vz,
    )


# --- Numba scalar versions (tuples of floats in and out) ---------------------------------------------------

quat_mul = _scalar(_quat_mul)
quat_conj = _scalar(_quat_conj)
quat_rotate = _scalar(_quat_rotate)
quat_yaw = _scalar(_quat_yaw)
quat_angle = _scalar(_quat_angle)
quat_to_mat = _scalar(_quat_to_mat)
quat_from_euler_scalar = _scalar(_quat_from_euler)
mat_vec = _scalar(_mat_vec)
mat_t_vec = _scalar(_mat_t_vec)


@njit(cache=True)
def quat_rotate_inv(q, v):
    """R(q)ᵀ v: rotation by the conjugate."""
    return quat_rotate(quat_conj(q), v)


@njit(cache=True)
def quat_diff_angle(a, b):
    """angle(a, b) = ‖axis-angle(a ⊗ b⁻¹)‖ in [0, π] (spec B3)."""
    return quat_angle(quat_mul(a, quat_conj(b)))


@njit(inline="always")
def quat_diff_angle_branchless(a, b):
    """quat_diff_angle with kernels.scalar's branch-free atan2 (the same to about 1e-16), for loops LLVM should
    vectorise: libm's atan2 is a call, which stops the loop vectoriser. Call it from a function compiled with
    ``error_model="numpy"`` (an inlined function takes its caller's error model)."""
    w, x, y, z = quat_mul(a, quat_conj(b))
    return 2.0 * atan2_nonneg(np.sqrt(x * x + y * y + z * z), abs(w))


@njit(cache=True)
def quat_to_6d(q):
    """The 6D rotation code of R(q): its first two columns, row-major (R00, R01, R10, R11, R20, R21)."""
    m = quat_to_mat(q)
    return (m[0], m[1], m[3], m[4], m[6], m[7])


@njit(cache=True)
def vec3_at(a, row, b):
    """a[row, b, 0:3] of a float32 (.., .., 3) array as a 3-tuple of float64."""
    return (float(a[row, b, 0]), float(a[row, b, 1]), float(a[row, b, 2]))


@njit(cache=True)
def quat_at(a, row, b):
    """a[row, b, 0:4] of a float32 (.., .., 4) array as a 4-tuple of float64."""
    return (float(a[row, b, 0]), float(a[row, b, 1]), float(a[row, b, 2]), float(a[row, b, 3]))


@njit(cache=True)
def sub3(a, b):
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


@njit(cache=True)
def sq_norm3(v):
    return v[0] * v[0] + v[1] * v[1] + v[2] * v[2]


# --- NumPy versions ((..., 4) quaternions, (..., 3) vectors) -----------------------------------------------


def quat_mul_np(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return _stack(_quat_mul(_components(a), _components(b)))


def quat_conj_np(q: np.ndarray) -> np.ndarray:
    return _stack(_quat_conj(_components(q)))


def quat_rotate_np(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    return _stack(_quat_rotate(_components(q), _components(v)))


def quat_rotate_inv_np(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    return quat_rotate_np(quat_conj_np(q), v)


def quat_yaw_np(q: np.ndarray) -> np.ndarray:
    return _stack(_quat_yaw(_components(q)))


def quat_angle_np(q: np.ndarray) -> np.ndarray:
    """(..., 4) -> (...,)."""
    return _quat_angle(_components(q))


def quat_diff_angle_np(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(..., 4), (..., 4) -> (...,)."""
    return quat_angle_np(quat_mul_np(a, quat_conj_np(b)))


def quat_to_mat_np(q: np.ndarray) -> np.ndarray:
    """(..., 4) -> (..., 3, 3)."""
    m = _stack(_quat_to_mat(_components(q)))
    return m.reshape(*m.shape[:-1], 3, 3)


def quat_to_6d_np(q: np.ndarray) -> np.ndarray:
    """(..., 4) -> (..., 6)."""
    m = quat_to_mat_np(q)
    return m[..., :, :2].reshape(*m.shape[:-2], 6)


def quat_from_euler(roll: np.ndarray, pitch: np.ndarray, yaw: np.ndarray) -> np.ndarray:
    """Unit quaternions (w,x,y,z) of the ZYX rotation yaw * pitch * roll."""
    return _stack(_quat_from_euler(roll, pitch, yaw))


def quat_axes(q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The x and z axes (first and third columns of R(q)) of unit quaternions (w,x,y,z)."""
    m = quat_to_mat_np(q)
    return m[..., :, 0], m[..., :, 2]
