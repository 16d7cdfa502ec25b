"""The meter's part of g1_motion: its synthetic snapshot (spec E3 arrays), a crowd of G1s tracking one smooth
motion clip, a few fallen.

The 500-frame clip is kinematic make-believe, not MuJoCo kinematics: the pelvis walks forward with a swaying
heading, the 14 tracked bodies sit at their KNEES_BENT offsets from the pelvis with a small sway, the joints
oscillate around the default pose, and velocities are finite differences of the poses (as ``csv_to_npz``
does). Each robot is its reference frame moved rigidly (yaw about the anchor, xy shift) plus per-body jitter;
about 2% are dropped, tilted or have an end effector off in height, so that they terminate.

Also its parity tolerances (``ATOL``, ``RTOL``) and the instructions its kernels take per env under callgrind
(``COST_PER_ENV``). The gate reads this file from a pull request's base commit, never from its head
(``gate.provenance``): a change cannot loosen the tolerance its kernels are checked with, nor change the
snapshots they are timed on.
"""

from __future__ import annotations

import numpy as np

from kernels.geometry import (
    quat_conj_np,
    quat_from_euler,
    quat_mul_np,
    quat_rotate_np,
    quat_to_mat_np,
)
from kernels.synthetic import keep_away
from kernels.tasks.g1_motion import constants as task
from kernels.tasks.g1_motion.reference import relative_bodies

# The parity tolerances (spec E5): floats within ATOL + RTOL * |reference|; uint8 outputs and state exactly equal.
ATOL = 1e-5
RTOL = 1e-4

# Instructions per env and call under callgrind, measured here (fusegate cost, quick profile): what balances the
# cost pass's cells over its worker processes. None: any other fused kernel.
COST_PER_ENV: dict[str | None, int] = {"numpy": 50_000, "assembled_generic": 17_000, None: 6_800}

FRAMES = 500
LAST_FRAME_FRACTION = 0.02  # envs sitting on the clip's last frame, where t' = t
# Fractions of envs dropped (anchor and feet too low), tilted (anchor gravity off) and with one end effector
# off in height: together about 2% done, as spec E4 asks.
FAILURES = {"dropped": 0.007, "tilted": 0.007, "end_effector": 0.006}

# Body origins in the pelvis frame at the KNEES_BENT pose (m), rounded from mj_kinematics of the Menagerie
# g1.xml, and the bodies' pitch relative to the pelvis at that pose (rad), in task.BODIES order.
BODY_OFFSETS = np.array(
    [
        [0.0, 0.0, 0.0],
        [0.009, 0.116, -0.132],
        [0.103, 0.119, -0.423],
        [-0.001, 0.119, -0.722],
        [0.009, -0.116, -0.132],
        [0.103, -0.119, -0.423],
        [-0.001, -0.119, -0.722],
        [-0.004, 0.0, 0.044],
        [-0.003, 0.14, 0.289],
        [-0.024, 0.183, 0.111],
        [0.097, 0.214, -0.024],
        [-0.003, -0.14, 0.289],
        [-0.024, -0.183, 0.111],
        [0.097, -0.214, -0.024],
    ]
)
BODY_PITCH = np.array([0.0, -0.49, 0.36, 0.0, -0.49, 0.36, 0.0, 0.0, 0.2, 0.8, 0.8, 0.2, 0.8, 0.8])


def _waves(rng: np.random.Generator, time: np.ndarray, amplitude: float, *shape: int) -> np.ndarray:
    """Sums of two low-frequency sinusoids (0.2-1.2 Hz) per element of ``shape``, sampled at ``time``."""
    amp = rng.uniform(0.3, 1.0, (2, *shape)) * amplitude / 2
    freq = rng.uniform(0.2, 1.2, (2, *shape))
    phase = rng.uniform(0.0, 2 * np.pi, (2, *shape))
    t = time.reshape(-1, *([1] * len(shape)))
    return sum(amp[k] * np.sin(2 * np.pi * freq[k] * t + phase[k]) for k in range(2))


def _angular_velocity(quat: np.ndarray) -> np.ndarray:
    """World angular velocity of (T,B,4) orientations: central differences, one-sided at the clip's ends."""
    after = np.concatenate([quat[1:], quat[-1:]])
    before = np.concatenate([quat[:1], quat[:-1]])
    span = np.full(len(quat), 2 * task.DT)
    span[[0, -1]] = task.DT
    delta = quat_mul_np(after, quat_conj_np(before))
    rotvec = 2 * delta[..., 1:] * np.sign(delta[..., :1])  # small-angle axis-angle, w >= 0
    return rotvec / span[:, None, None]


def _normalised(q: np.ndarray) -> np.ndarray:
    return q / np.linalg.norm(q, axis=-1, keepdims=True)


def make_motion_library(rng: np.random.Generator) -> dict[str, np.ndarray]:
    """The motion_* arrays of one smooth clip, float64."""
    time = np.arange(FRAMES) * task.DT
    joint_pos = task.DEFAULT_POSE + _waves(rng, time, 0.3, task.NUM_JOINTS)

    heading = 0.5 * np.sin(2 * np.pi * 0.05 * time + rng.uniform(0, 2 * np.pi))
    pelvis_pos = np.zeros((FRAMES, 3))
    pelvis_pos[:, 0] = np.cumsum(0.6 * task.DT * np.cos(heading))
    pelvis_pos[:, 1] = np.cumsum(0.6 * task.DT * np.sin(heading))
    pelvis_pos[:, 2] = task.DEFAULT_BASE_HEIGHT + 0.02 * np.sin(2 * np.pi * 1.5 * time)
    pelvis_quat = quat_from_euler(_waves(rng, time, 0.05), _waves(rng, time, 0.05), heading)

    sway = _waves(rng, time, 0.03, task.NUM_BODIES, 3)
    sway[:, task.ROOT] = 0.0
    body_pos = pelvis_pos[:, None] + quat_rotate_np(pelvis_quat[:, None], BODY_OFFSETS + sway)
    tilt = _waves(rng, time, 0.1, 3, task.NUM_BODIES)
    tilt[:, :, task.ROOT] = 0.0
    local_quat = quat_from_euler(tilt[:, 0], BODY_PITCH + tilt[:, 1], tilt[:, 2])
    body_quat = quat_mul_np(pelvis_quat[:, None], local_quat)
    return {
        "motion_joint_pos": joint_pos,
        "motion_joint_vel": np.gradient(joint_pos, task.DT, axis=0),
        "motion_body_pos_w": body_pos,
        "motion_body_lin_vel_w": np.gradient(body_pos, task.DT, axis=0),
        "motion_body_ang_vel_w": _angular_velocity(body_quat),
        "motion_body_quat_w": body_quat,
    }


def _with_up_z(q: np.ndarray, up_z: np.ndarray) -> np.ndarray:
    """Unit quaternions like ``q`` whose R22 (world z of the body z axis) is ``up_z``. R22 = (w² + z²) − (x² + y²),
    so rescaling the (w, z) and (x, y) pairs changes only the tilt angle, not the tilt axis or the twist."""
    wz = q[:, [0, 3]] * np.sqrt((1 + up_z) / 2 / np.sum(q[:, [0, 3]] ** 2, axis=1))[:, None]
    xy = q[:, [1, 2]] * np.sqrt((1 - up_z) / 2 / np.sum(q[:, [1, 2]] ** 2, axis=1))[:, None]
    return np.stack([wz[:, 0], xy[:, 0], xy[:, 1], wz[:, 1]], axis=1)


def _keep_clear(diff: np.ndarray, threshold: float) -> np.ndarray:
    """``diff`` with nothing near ``threshold`` in absolute value."""
    return keep_away(keep_away(diff, threshold), -threshold)


def make_motion_inputs(n: int, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng([seed, 0x6D6F])
    library = make_motion_library(rng)
    A, ee = task.ANCHOR, list(task.END_EFFECTORS)
    nb, nj = task.NUM_BODIES, task.NUM_JOINTS

    def normal(scale: float, *shape: int) -> np.ndarray:
        return rng.normal(0.0, scale, size=(n, *shape))

    time_steps = rng.integers(0, FRAMES, n)
    time_steps[rng.random(n) < LAST_FRAME_FRACTION] = FRAMES - 1
    ref_pos = library["motion_body_pos_w"][time_steps]
    ref_quat = library["motion_body_quat_w"][time_steps]

    # Robot: the reference frame turned about its anchor, shifted in xy, and jittered per body.
    turn = quat_from_euler(np.zeros(n), np.zeros(n), normal(0.1))[:, None]
    shift = np.concatenate([normal(0.05, 2), np.zeros((n, 1))], axis=1)[:, None]
    ref_anchor = ref_pos[:, A, None]
    pos = ref_anchor + shift + quat_rotate_np(turn, ref_pos - ref_anchor) + normal(0.02, nb, 3)
    jitter = quat_from_euler(normal(0.05, nb), normal(0.05, nb), normal(0.05, nb))
    quat = quat_mul_np(turn, quat_mul_np(ref_quat, jitter))
    lin_vel = library["motion_body_lin_vel_w"][time_steps] + normal(0.2, nb, 3)
    ang_vel = library["motion_body_ang_vel_w"][time_steps] + normal(0.5, nb, 3)
    joint_pos = library["motion_joint_pos"][time_steps] + normal(0.05, nj)
    past_limit = rng.random((n, nj)) < 0.03  # some joints anywhere in their range, past the soft limits
    lo, hi = task.JOINT_RANGE[:, 0], task.JOINT_RANGE[:, 1]
    joint_pos = np.where(past_limit, rng.uniform(lo, hi, (n, nj)), joint_pos)
    joint_vel = library["motion_joint_vel"][time_steps] + normal(0.5, nj)

    # Failures: dropped robots, robots rolled about their own x axis, one end effector off in height.
    kind = rng.choice(len(FAILURES) + 1, size=n, p=[1 - sum(FAILURES.values()), *FAILURES.values()])
    dropped, tilted, off = (kind == k for k in range(1, len(FAILURES) + 1))
    pos[dropped, :, 2] -= rng.uniform(0.3, 0.6, (int(dropped.sum()), 1))
    roll = quat_from_euler(rng.uniform(1.5, 2.5, n), np.zeros(n), np.zeros(n))[:, None]
    quat = np.where(tilted[:, None, None], quat_mul_np(quat, roll), quat)
    foot_or_hand = rng.choice(ee, n)
    lift = rng.uniform(0.3, 0.5, n) * rng.choice([-1.0, 1.0], n)
    pos[off, foot_or_hand[off], 2] += lift[off]

    # p̃/q̃ as the previous step left them: frame t seen from the anchor one step earlier, slightly elsewhere.
    prev_anchor_pos = pos[:, A] - task.DT * lin_vel[:, A] + normal(0.005, 3)
    prev_anchor_quat = _normalised(quat_mul_np(quat[:, A], quat_from_euler(*normal(0.02, 3).T)))
    rel_pos, rel_quat = relative_bodies(ref_pos, ref_quat, prev_anchor_pos, prev_anchor_quat)

    # Keep every termination test clear of its threshold (spec E4), on the quantities the tests compare.
    thresholds = task.TERMINATION_THRESHOLDS
    anchor_dz = pos[:, A, 2] - ref_pos[:, A, 2]
    pos[:, A, 2] = ref_pos[:, A, 2] + _keep_clear(anchor_dz, thresholds["anchor_pos"])
    ee_dz = pos[:, ee, 2] - rel_pos[:, ee, 2]
    pos[:, ee, 2] = rel_pos[:, ee, 2] + _keep_clear(ee_dz, thresholds["ee_body_pos"])
    quat = _normalised(quat)
    ref_up_z = quat_to_mat_np(ref_quat[:, A])[:, 2, 2]
    up_z = quat_to_mat_np(quat[:, A])[:, 2, 2]
    clear_up_z = ref_up_z - _keep_clear(ref_up_z - up_z, thresholds["anchor_ori"])
    moved = clear_up_z != up_z
    quat[moved, A] = _with_up_z(quat[moved, A], clear_up_z[moved])

    actions = normal(0.5, nj)
    arrays = {
        **library,
        "body_pos_w": pos,
        "body_lin_vel_w": lin_vel,
        "body_ang_vel_w": ang_vel,
        "body_quat_w": quat,
        "joint_pos": joint_pos,
        "joint_vel": joint_vel,
        "actions": actions,
        "last_actions": actions + normal(0.2, nj),
        "time_steps": time_steps,
        "noise_u": rng.random((n, task.NOISE_DIM)),
        "rel_body_pos": rel_pos,
        "rel_body_quat": rel_quat,
    }
    snap = {s.name: np.ascontiguousarray(arrays[s.name], dtype=s.dtype) for s in task.CONTRACT.snapshot}
    f32 = np.float32
    snap["noise_u"] = np.minimum(snap["noise_u"], f32(1.0) - np.finfo(f32).epsneg)  # stay in [0, 1)
    return snap


def make_inputs(num_envs: int, seed: int = 0) -> dict[str, np.ndarray]:
    """A deterministic synthetic snapshot of g1_motion (spec E4): its input and state arrays, by spec E name."""
    return make_motion_inputs(int(num_envs), seed)
