"""NumPy reference of the G1 motion-tracking ``update_state`` (spec B2-B5, E3): the semantics.

Written to be checked line by line against the spec: one function per reward term and per termination, named as
the term, each vectorised over envs and returning the unweighted per-env value. It works in float64 on copies
of the float32 snapshot and may allocate.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kernels.geometry import (
    quat_conj_np,
    quat_diff_angle_np,
    quat_mul_np,
    quat_rotate_inv_np,
    quat_rotate_np,
    quat_to_6d_np,
    quat_yaw_np,
)
from kernels.reference.g1_walk import noisy
from kernels.tasks import g1_motion as task

A = task.ANCHOR
GRAVITY = np.array([0.0, 0.0, -1.0])


@dataclass(frozen=True)
class Bodies:
    """The 14 tracked bodies (world poses and body-origin velocities) and the 29 joints, float64 per env."""

    pos: np.ndarray  # (N,14,3)
    quat: np.ndarray  # (N,14,4)
    lin_vel: np.ndarray  # (N,14,3)
    ang_vel: np.ndarray  # (N,14,3)
    joint_pos: np.ndarray  # (N,29)
    joint_vel: np.ndarray  # (N,29)


def robot_bodies(snap: dict[str, np.ndarray]) -> Bodies:
    return Bodies(
        pos=snap["body_pos_w"].astype(np.float64),
        quat=snap["body_quat_w"].astype(np.float64),
        lin_vel=snap["body_lin_vel_w"].astype(np.float64),
        ang_vel=snap["body_ang_vel_w"].astype(np.float64),
        joint_pos=snap["joint_pos"].astype(np.float64),
        joint_vel=snap["joint_vel"].astype(np.float64),
    )


def motion_frame(snap: dict[str, np.ndarray], frames: np.ndarray) -> Bodies:
    """The reference at motion frame ``frames[i]`` for each env i."""
    return Bodies(
        pos=snap["motion_body_pos_w"][frames].astype(np.float64),
        quat=snap["motion_body_quat_w"][frames].astype(np.float64),
        lin_vel=snap["motion_body_lin_vel_w"][frames].astype(np.float64),
        ang_vel=snap["motion_body_ang_vel_w"][frames].astype(np.float64),
        joint_pos=snap["motion_joint_pos"][frames].astype(np.float64),
        joint_vel=snap["motion_joint_vel"][frames].astype(np.float64),
    )


@dataclass(frozen=True)
class Step:
    """What rewards and terminations see (spec E3 stage 1): the robot, frame t, and p̃/q̃ as they came in."""

    robot: Bodies
    ref: Bodies  # motion frame t
    rel_pos: np.ndarray  # (N,14,3) p̃, computed at the end of the previous step
    rel_quat: np.ndarray  # (N,14,4) q̃
    actions: np.ndarray  # (N,29) a_t
    last_actions: np.ndarray  # (N,29) a_{t-1}


def make_step(snap: dict[str, np.ndarray]) -> Step:
    """Stage 1's view of a snapshot."""
    return Step(
        robot=robot_bodies(snap),
        ref=motion_frame(snap, snap["time_steps"]),
        rel_pos=snap["rel_body_pos"].astype(np.float64),
        rel_quat=snap["rel_body_quat"].astype(np.float64),
        actions=snap["actions"].astype(np.float64),
        last_actions=snap["last_actions"].astype(np.float64),
    )


def _exp_kernel(term: str, squared_error: np.ndarray) -> np.ndarray:
    return np.exp(-squared_error / task.REWARD_STDS[term] ** 2)


# --- reward terms (spec B3), unweighted ---------------------------------------------------------------------


def motion_global_anchor_pos(s: Step) -> np.ndarray:
    err = np.sum(np.square(s.ref.pos[:, A] - s.robot.pos[:, A]), axis=-1)
    return _exp_kernel("motion_global_anchor_pos", err)


def motion_global_anchor_ori(s: Step) -> np.ndarray:
    err = np.square(quat_diff_angle_np(s.ref.quat[:, A], s.robot.quat[:, A]))
    return _exp_kernel("motion_global_anchor_ori", err)


def motion_body_pos(s: Step) -> np.ndarray:
    err = np.sum(np.square(s.rel_pos - s.robot.pos), axis=-1)
    return _exp_kernel("motion_body_pos", err.mean(axis=1))


def motion_body_ori(s: Step) -> np.ndarray:
    err = np.square(quat_diff_angle_np(s.rel_quat, s.robot.quat))
    return _exp_kernel("motion_body_ori", err.mean(axis=1))


def motion_body_lin_vel(s: Step) -> np.ndarray:
    err = np.sum(np.square(s.ref.lin_vel - s.robot.lin_vel), axis=-1)
    return _exp_kernel("motion_body_lin_vel", err.mean(axis=1))


def motion_body_ang_vel(s: Step) -> np.ndarray:
    err = np.sum(np.square(s.ref.ang_vel - s.robot.ang_vel), axis=-1)
    return _exp_kernel("motion_body_ang_vel", err.mean(axis=1))


def action_rate_l2(s: Step) -> np.ndarray:
    return np.sum(np.square(s.actions - s.last_actions), axis=1)


def joint_limit(s: Step) -> np.ndarray:
    q = s.robot.joint_pos
    return np.sum(np.maximum(task.SOFT_LOWER - q, 0.0) + np.maximum(q - task.SOFT_UPPER, 0.0), axis=1)


# name -> f(Step) -> (N,) unweighted value, in spec E3 order.
REWARD_TERMS = {
    f.__name__: f
    for f in (
        motion_global_anchor_pos,
        motion_global_anchor_ori,
        motion_body_pos,
        motion_body_ori,
        motion_body_lin_vel,
        motion_body_ang_vel,
        action_rate_l2,
        joint_limit,
    )
}
assert tuple(REWARD_TERMS) == task.TERMS


# --- terminations (spec B4) ---------------------------------------------------------------------------------


def anchor_pos(s: Step) -> np.ndarray:
    err = np.abs(s.ref.pos[:, A, 2] - s.robot.pos[:, A, 2])
    return err > task.TERMINATION_THRESHOLDS["anchor_pos"]


def anchor_ori(s: Step) -> np.ndarray:
    ref_gravity_z = quat_rotate_inv_np(s.ref.quat[:, A], GRAVITY)[:, 2]
    robot_gravity_z = quat_rotate_inv_np(s.robot.quat[:, A], GRAVITY)[:, 2]
    return np.abs(ref_gravity_z - robot_gravity_z) > task.TERMINATION_THRESHOLDS["anchor_ori"]


def ee_body_pos(s: Step) -> np.ndarray:
    ee = list(task.END_EFFECTORS)
    err = np.abs(s.rel_pos[:, ee, 2] - s.robot.pos[:, ee, 2])
    return np.any(err > task.TERMINATION_THRESHOLDS["ee_body_pos"], axis=1)


TERMINATIONS = {f.__name__: f for f in (anchor_pos, anchor_ori, ee_body_pos)}
assert tuple(TERMINATIONS) == tuple(task.TERMINATION_THRESHOLDS)


# --- relative bodies and observations (spec B2, B5) ---------------------------------------------------------


def relative_bodies(
    motion_pos: np.ndarray,
    motion_quat: np.ndarray,
    robot_anchor_pos: np.ndarray,
    robot_anchor_quat: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """p̃/q̃ (spec B2): the reference bodies (N,14,·) moved onto the robot anchor (N,·) in xy and yaw."""
    motion_anchor_pos, motion_anchor_quat = motion_pos[:, A], motion_quat[:, A]
    delta_quat = quat_yaw_np(quat_mul_np(robot_anchor_quat, quat_conj_np(motion_anchor_quat)))[:, None]
    delta_pos = np.concatenate([robot_anchor_pos[:, :2], motion_anchor_pos[:, 2:]], axis=1)[:, None]
    rel_quat = quat_mul_np(delta_quat, motion_quat)
    rel_pos = delta_pos + quat_rotate_np(delta_quat, motion_pos - motion_anchor_pos[:, None])
    return rel_pos, rel_quat


def observations(
    robot: Bodies, ref: Bodies, actions: np.ndarray, noise_u: np.ndarray, noise_level: float
) -> tuple[np.ndarray, np.ndarray]:
    """Actor (noisy) and critic (noise-free) observations against reference frame ``ref`` (spec B5)."""
    n = actions.shape[0]
    anchor_pos, anchor_quat = robot.pos[:, A], robot.quat[:, A]
    anchor_to_body = quat_mul_np(quat_conj_np(anchor_quat)[:, None], robot.quat)
    blocks = {
        "command": np.concatenate([ref.joint_pos, ref.joint_vel], axis=1),
        "motion_anchor_pos_b": quat_rotate_inv_np(anchor_quat, ref.pos[:, A] - anchor_pos),
        "motion_anchor_ori_b": quat_to_6d_np(quat_mul_np(quat_conj_np(anchor_quat), ref.quat[:, A])),
        "body_pos": quat_rotate_inv_np(anchor_quat[:, None], robot.pos - anchor_pos[:, None]).reshape(n, -1),
        "body_ori": quat_to_6d_np(anchor_to_body).reshape(n, -1),
        "base_lin_vel": quat_rotate_inv_np(robot.quat[:, task.ROOT], robot.lin_vel[:, task.ROOT]),
        "base_ang_vel": quat_rotate_inv_np(robot.quat[:, task.ROOT], robot.ang_vel[:, task.ROOT]),
        "joint_pos": robot.joint_pos - task.DEFAULT_POSE,
        "joint_vel": robot.joint_vel,
        "actions": actions,
    }
    actor = dict(blocks)
    for name, scale in task.NOISE_SCALES.items():
        start = task.NOISE_COLUMNS[name]
        u = noise_u[:, start : start + blocks[name].shape[1]]
        actor[name] = noisy(blocks[name], u, scale, noise_level)
    obs = np.concatenate([actor[name] for name in task.OBS_BLOCKS], axis=1)
    critic = np.concatenate([blocks[name] for name in task.CRITIC_OBS_BLOCKS], axis=1)
    return obs, critic


# --- update_state -------------------------------------------------------------------------------------------


def update_state(
    snap: dict[str, np.ndarray], out: dict[str, np.ndarray], *, noise_level: float = task.NOISE_LEVEL
) -> None:
    """One call in spec E3's order: (1) terminations and rewards, (2) p̃/q̃ update, (3) observations."""
    frames = snap["motion_joint_pos"].shape[0]
    t = snap["time_steps"]

    # (1) Against frame t and the incoming p̃/q̃.
    s = make_step(snap)
    done = np.any([f(s) for f in TERMINATIONS.values()], axis=0)
    values = np.stack([f(s) for f in REWARD_TERMS.values()], axis=1)
    weights = np.array(list(task.REWARD_SCALES.values()))

    # (2) t' = min(t + 1, T - 1): p̃/q̃ from frame t' and the current robot anchor, in place.
    ref_next = motion_frame(snap, np.minimum(t + 1, frames - 1))
    rel_pos, rel_quat = relative_bodies(ref_next.pos, ref_next.quat, s.robot.pos[:, A], s.robot.quat[:, A])
    snap["rel_body_pos"][...] = rel_pos
    snap["rel_body_quat"][...] = rel_quat

    # (3) Observations at frame t'.
    obs, critic = observations(s.robot, ref_next, s.actions, snap["noise_u"].astype(np.float64), noise_level)

    out["done"][...] = done
    out["reward"][...] = task.DT * (values @ weights)
    out["term_means"][...] = values.mean(axis=0)
    out["obs"][...] = obs
    out["critic_obs"][...] = critic
