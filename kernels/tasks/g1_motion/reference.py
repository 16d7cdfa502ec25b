"""NumPy reference of the G1 motion-tracking ``update_state`` (spec B2-B5, E3): the semantics, driven by a plan.

Written to be checked line by line against the spec: one function per term of the library
(``kernels.tasks.g1_motion.plan``), named as the term. A reward term returns the unweighted per-env value f_k, a
termination term a per-env flag, an observation term its noise-free (N, dim) block. ``update_state`` computes
what the plan lists, so every valid sub-plan has a reference answer; p̃/q̃ are state and always updated. It
works in float64 on copies of the float32 snapshot and may allocate.
"""

from __future__ import annotations

from collections.abc import Mapping
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
from kernels.kernel import Kernel
from kernels.spec import TaskPlan
from kernels.tasks.g1_motion import constants as task
from kernels.tasks.g1_motion import plan as plan_lib
from kernels.tasks.g1_walk.reference import noisy

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


def _exp_kernel(squared_error: np.ndarray, p: plan_lib.ExpKernel) -> np.ndarray:
    return np.exp(-squared_error / p.std**2)


# --- reward terms (spec B3), unweighted ---------------------------------------------------------------------


def motion_global_anchor_pos(s: Step, p: plan_lib.ExpKernel) -> np.ndarray:
    err = np.sum(np.square(s.ref.pos[:, A] - s.robot.pos[:, A]), axis=-1)
    return _exp_kernel(err, p)


def motion_global_anchor_ori(s: Step, p: plan_lib.ExpKernel) -> np.ndarray:
    err = np.square(quat_diff_angle_np(s.ref.quat[:, A], s.robot.quat[:, A]))
    return _exp_kernel(err, p)


def motion_body_pos(s: Step, p: plan_lib.ExpKernel) -> np.ndarray:
    err = np.sum(np.square(s.rel_pos - s.robot.pos), axis=-1)
    return _exp_kernel(err.mean(axis=1), p)


def motion_body_ori(s: Step, p: plan_lib.ExpKernel) -> np.ndarray:
    err = np.square(quat_diff_angle_np(s.rel_quat, s.robot.quat))
    return _exp_kernel(err.mean(axis=1), p)


def motion_body_lin_vel(s: Step, p: plan_lib.ExpKernel) -> np.ndarray:
    err = np.sum(np.square(s.ref.lin_vel - s.robot.lin_vel), axis=-1)
    return _exp_kernel(err.mean(axis=1), p)


def motion_body_ang_vel(s: Step, p: plan_lib.ExpKernel) -> np.ndarray:
    err = np.sum(np.square(s.ref.ang_vel - s.robot.ang_vel), axis=-1)
    return _exp_kernel(err.mean(axis=1), p)


def action_rate_l2(s: Step, p: object) -> np.ndarray:
    return np.sum(np.square(s.actions - s.last_actions), axis=1)


def joint_limit(s: Step, p: object) -> np.ndarray:
    q = s.robot.joint_pos
    return np.sum(np.maximum(task.SOFT_LOWER - q, 0.0) + np.maximum(q - task.SOFT_UPPER, 0.0), axis=1)


# --- terminations (spec B4) ---------------------------------------------------------------------------------


def anchor_pos(s: Step, p: plan_lib.Threshold) -> np.ndarray:
    err = np.abs(s.ref.pos[:, A, 2] - s.robot.pos[:, A, 2])
    return err > p.threshold


def anchor_ori(s: Step, p: plan_lib.Threshold) -> np.ndarray:
    ref_gravity_z = quat_rotate_inv_np(s.ref.quat[:, A], GRAVITY)[:, 2]
    robot_gravity_z = quat_rotate_inv_np(s.robot.quat[:, A], GRAVITY)[:, 2]
    return np.abs(ref_gravity_z - robot_gravity_z) > p.threshold


def ee_body_pos(s: Step, p: plan_lib.Threshold) -> np.ndarray:
    ee = list(task.END_EFFECTORS)
    err = np.abs(s.rel_pos[:, ee, 2] - s.robot.pos[:, ee, 2])
    return np.any(err > p.threshold, axis=1)


# --- relative bodies (spec B2) ------------------------------------------------------------------------------


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


# --- observation blocks (spec B5), noise-free ---------------------------------------------------------------


@dataclass(frozen=True)
class Observed:
    """What observations see (spec E3 stage 3): the robot, motion frame t' and the actions a_t."""

    robot: Bodies
    ref: Bodies  # motion frame t' = min(t + 1, T - 1)
    actions: np.ndarray  # (N,29)


def _anchor_frame(v: Observed, world: np.ndarray) -> np.ndarray:
    """R(q^r_a)ᵀ applied to world vectors (N,3) or (N,14,3)."""
    anchor_quat = v.robot.quat[:, A]
    return quat_rotate_inv_np(anchor_quat if world.ndim == 2 else anchor_quat[:, None], world)


def _body_pos(v: Observed) -> np.ndarray:
    n = v.actions.shape[0]
    return _anchor_frame(v, v.robot.pos - v.robot.pos[:, A, None]).reshape(n, -1)


def _body_ori(v: Observed) -> np.ndarray:
    n = v.actions.shape[0]
    return quat_to_6d_np(quat_mul_np(quat_conj_np(v.robot.quat[:, A])[:, None], v.robot.quat)).reshape(n, -1)


def _base_frame(v: Observed, world: np.ndarray) -> np.ndarray:
    """A pelvis world vector (N,3) in the pelvis frame."""
    return quat_rotate_inv_np(v.robot.quat[:, task.ROOT], world)


# name -> f(Observed) -> (N, dim) block, the library's observation terms (spec B5).
OBSERVATIONS = {
    "command": lambda v: np.concatenate([v.ref.joint_pos, v.ref.joint_vel], axis=1),
    "motion_anchor_pos_b": lambda v: _anchor_frame(v, v.ref.pos[:, A] - v.robot.pos[:, A]),
    "motion_anchor_ori_b": lambda v: quat_to_6d_np(
        quat_mul_np(quat_conj_np(v.robot.quat[:, A]), v.ref.quat[:, A])
    ),
    "body_pos": _body_pos,
    "body_ori": _body_ori,
    "base_lin_vel": lambda v: _base_frame(v, v.robot.lin_vel[:, task.ROOT]),
    "base_ang_vel": lambda v: _base_frame(v, v.robot.ang_vel[:, task.ROOT]),
    "joint_pos": lambda v: v.robot.joint_pos - task.DEFAULT_POSE,
    "joint_vel": lambda v: v.robot.joint_vel,
    "actions": lambda v: v.actions,
}

# name -> f(Step, params) for every reward and termination term of the library.
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
TERMINATIONS = {f.__name__: f for f in (anchor_pos, anchor_ori, ee_body_pos)}
assert set(REWARD_TERMS) == set(plan_lib.LIBRARY["reward"])
assert set(TERMINATIONS) == set(plan_lib.LIBRARY["termination"])
assert set(OBSERVATIONS) == set(plan_lib.LIBRARY["observation"])


def observation(
    plan: TaskPlan, group: str, v: Observed, noise_u: np.ndarray, values: dict[str, np.ndarray]
) -> np.ndarray:
    """The (N, width) array of one observation group, included groups first (their noise included)."""
    g = plan.group(group)
    blocks = [values[g.include]] if g.include else []
    for term in g.terms:
        block = OBSERVATIONS[term.fn](v)
        if term.noise:
            column = plan.definition(term).noise_column
            block = noisy(block, noise_u[:, column : column + block.shape[1]], term.noise, plan.noise_level)
        blocks.append(block)
    n = v.actions.shape[0]
    return np.concatenate(blocks, axis=1) if blocks else np.empty((n, 0))


# --- update_state -------------------------------------------------------------------------------------------


def update_state(snap: dict[str, np.ndarray], out: dict[str, np.ndarray], plan: TaskPlan) -> None:
    """One call in spec E3's order: (1) terminations and rewards, (2) p̃/q̃ update, (3) observations."""
    frames = snap["motion_joint_pos"].shape[0]
    t = snap["time_steps"]

    # (1) Against frame t and the incoming p̃/q̃.
    s = make_step(snap)
    done = np.zeros(t.shape[0], dtype=bool)
    for term in plan.terminations:
        done |= TERMINATIONS[term.fn](s, term.params)
    values = np.zeros((t.shape[0], len(plan.rewards)))
    for k, r in enumerate(plan.rewards):
        values[:, k] = REWARD_TERMS[r.fn](s, r.params)
    weights = np.array([r.weight for r in plan.rewards])

    # (2) t' = min(t + 1, T - 1): p̃/q̃ from frame t' and the current robot anchor, in place. Every plan has
    # this: p̃/q̃ are state.
    ref_next = motion_frame(snap, np.minimum(t + 1, frames - 1))
    rel_pos, rel_quat = relative_bodies(ref_next.pos, ref_next.quat, s.robot.pos[:, A], s.robot.quat[:, A])
    snap["rel_body_pos"][...] = rel_pos
    snap["rel_body_quat"][...] = rel_quat

    # (3) Observations at frame t'.
    seen = Observed(robot=s.robot, ref=ref_next, actions=s.actions)
    noise_u = snap["noise_u"].astype(np.float64)
    groups: dict[str, np.ndarray] = {}
    for g in plan.observations:
        groups[g.name] = observation(plan, g.name, seen, noise_u, groups)
        out[g.name][...] = groups[g.name]

    out["done"][...] = done
    out["reward"][...] = plan.dt * (values @ weights)
    out["term_means"][...] = values.mean(axis=0)


class ReferenceMotion(Kernel):
    """The reference as a kernel: ``update_state`` above, on the kernel's plan."""

    def __init__(self, **kwargs):
        super().__init__(task.CONTRACT, **kwargs)

    def _run(self, snap: Mapping[str, np.ndarray], out: dict[str, np.ndarray]) -> None:
        update_state(snap, out, self.plan)
