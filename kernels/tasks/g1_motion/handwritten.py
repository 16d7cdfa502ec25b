"""Hand-written fused Numba kernel of the G1 motion-tracking ``update_state`` (spec B2-B5, E3).

One ``prange`` pass over envs. Per env it gathers the motion rows of frames t and t' = min(t + 1, T − 1) and
computes each anchor rotation once. The bodies take three loops: a gather loop sums the position and velocity
errors against the incoming p̃ and frame t and fills this thread's lanes (``kernels.scalar.LANES``); one
branch-free pass over the lanes, which LLVM vectorises, computes the orientation errors against the incoming
q̃, the new p̃/q̃ from frame t' and the critic's body blocks; a store loop writes them out. Every incoming p̃/q̃
is read before the store loop replaces it, so spec E3's order holds. One pass over the 29 joints does the joint
terms and blocks. Everything is computed in float64. Per-term sums for ``term_means`` go to per-thread scratch
rows (one cache line apart), reduced after the loop. Nothing is allocated per call.

Numba's cache directory is keyed by every source of ``kernels`` (``kernels._cache``), so edits to the helpers and
task constants this kernel freezes in at compile time recompile it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numba
import numpy as np
from numba import njit, prange

from kernels.geometry import (
    R22,
    mat_t_vec,
    mat_vec,
    quat_conj,
    quat_diff_angle,
    quat_diff_angle_branchless,
    quat_mul,
    quat_rotate_inv,
    quat_to_6d,
    quat_to_mat,
    quat_yaw,
)
from kernels.kernel import Kernel, max_threads, padded_scratch
from kernels.scalar import LANES, lanes3, lanes4, reduce_means, set_lanes
from kernels.tasks.g1_motion import constants as task
from kernels.tasks.g1_motion import plan as g1_motion_plan
from kernels.tasks.g1_motion.constants import BODY_ORI_DIM, BODY_POS_DIM

DT = task.DT
NB, NJ = task.NUM_BODIES, task.NUM_JOINTS
A, ROOT, END_EFFECTORS = task.ANCHOR, task.ROOT, task.END_EFFECTORS
W_APOS, W_AORI, W_BPOS, W_BORI, W_BLIN, W_BANG, W_RATE, W_LIMIT = task.REWARD_SCALES.values()
INV_VAR_APOS, INV_VAR_AORI, INV_VAR_BPOS, INV_VAR_BORI, INV_VAR_BLIN, INV_VAR_BANG = (
    1.0 / std**2 for std in task.REWARD_STDS.values()
)
MAX_ANCHOR_DZ, MAX_ANCHOR_GRAVITY_DZ, MAX_EE_DZ = task.TERMINATION_THRESHOLDS.values()
N_TERMS = len(task.TERMS)
# term_means slots, in the order of task.TERMS (the order of the weights above)
K_APOS, K_AORI, K_BPOS, K_BORI, K_BLIN, K_BANG, K_RATE, K_LIMIT = range(N_TERMS)


def _noisy_block(name: str) -> tuple[int, int, int, float]:
    """Start columns of an observation block in obs, critic_obs and noise_u, and its noise scale."""
    columns = (task.OBS_COLUMNS, task.CRITIC_OBS_COLUMNS, task.NOISE_COLUMNS)
    return (*(c[name] for c in columns), task.NOISE_SCALES[name])


O_ANCHOR_POS, C_ANCHOR_POS, U_ANCHOR_POS, S_ANCHOR_POS = _noisy_block("motion_anchor_pos_b")
O_ANCHOR_ORI, C_ANCHOR_ORI, U_ANCHOR_ORI, S_ANCHOR_ORI = _noisy_block("motion_anchor_ori_b")
O_LIN_VEL, C_LIN_VEL, U_LIN_VEL, S_LIN_VEL = _noisy_block("base_lin_vel")
O_ANG_VEL, C_ANG_VEL, U_ANG_VEL, S_ANG_VEL = _noisy_block("base_ang_vel")
O_JOINT_POS, C_JOINT_POS, U_JOINT_POS, S_JOINT_POS = _noisy_block("joint_pos")
O_JOINT_VEL, C_JOINT_VEL, U_JOINT_VEL, S_JOINT_VEL = _noisy_block("joint_vel")
O_COMMAND, C_COMMAND = task.OBS_COLUMNS["command"], task.CRITIC_OBS_COLUMNS["command"]
O_ACTIONS, C_ACTIONS = task.OBS_COLUMNS["actions"], task.CRITIC_OBS_COLUMNS["actions"]
C_BODY_POS, C_BODY_ORI = task.CRITIC_OBS_COLUMNS["body_pos"], task.CRITIC_OBS_COLUMNS["body_ori"]


@njit
def _vec3(a, row, b):
    return (float(a[row, b, 0]), float(a[row, b, 1]), float(a[row, b, 2]))


@njit
def _quat(a, row, b):
    return (float(a[row, b, 0]), float(a[row, b, 1]), float(a[row, b, 2]), float(a[row, b, 3]))


@njit
def _sub3(a, b):
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


@njit
def _sq_norm3(v):
    return v[0] * v[0] + v[1] * v[1] + v[2] * v[2]


@njit
def _store(row, start, values):
    for k in range(len(values)):
        row[start + k] = values[k]


@njit
def _store_noisy(row, start, values, u, u_start, scale, level):
    """x + level * (2u − 1) * scale, spec E1."""
    for k in range(len(values)):
        row[start + k] = values[k] + level * (2.0 * u[u_start + k] - 1.0) * scale


# The rows of the per-body lanes (kernels.scalar.LANES), name -> width: inputs, then outputs.
LANE_ROWS = {
    "pos": 3,
    "motion_pos": 3,
    "quat": 4,
    "rel_quat": 4,
    "motion_quat": 4,
    "angle_sq": 1,
    "new_rel_pos": 3,
    "new_rel_quat": 4,
    "body_pos_b": 3,
    "body_ori_b": 6,
}
(
    L_POS,
    L_MOTION_POS,
    L_QUAT,
    L_REL_QUAT,
    L_MOTION_QUAT,
    L_ANGLE_SQ,
    L_NEW_REL_POS,
    L_NEW_REL_QUAT,
    L_BODY_POS_B,
    L_BODY_ORI_B,
) = np.cumsum([0, *LANE_ROWS.values()])[:-1].tolist()
LANE_SIZE = sum(LANE_ROWS.values()) * LANES
assert NB <= LANES


@njit(error_model="numpy")
def body_lanes(s, pa, pm1, delta_r, delta_q, ra, qa_inv):
    """Per body: its squared angle to the incoming q̃ (spec B3), the new p̃/q̃ from frame t' (B2) and its
    critic blocks in the anchor frame (B5), in one branch-free loop over the lanes of ``s``.

    p̃_b = Δp + R(Δq)(p^m_b − p^m_a), q̃_b = Δq ⊗ q^m_b at frame t', with Δp = (p^r_a,x, p^r_a,y, p^m_a,z)."""
    for b in range(LANES):
        p = lanes3(s, L_POS, b)
        q = lanes4(s, L_QUAT, b)
        angle = quat_diff_angle_branchless(lanes4(s, L_REL_QUAT, b), q)
        s[L_ANGLE_SQ * LANES + b] = angle * angle
        offset = mat_vec(delta_r, _sub3(lanes3(s, L_MOTION_POS, b), pm1))
        set_lanes(s, L_NEW_REL_POS, b, (pa[0] + offset[0], pa[1] + offset[1], pm1[2] + offset[2]))
        set_lanes(s, L_NEW_REL_QUAT, b, quat_mul(delta_q, lanes4(s, L_MOTION_QUAT, b)))
        set_lanes(s, L_BODY_POS_B, b, mat_t_vec(ra, _sub3(p, pa)))
        set_lanes(s, L_BODY_ORI_B, b, quat_to_6d(quat_mul(qa_inv, q)))


@njit(parallel=True, cache=True)
def update_state_kernel(
    body_pos,
    body_lin_vel,
    body_ang_vel,
    body_quat,
    joint_pos,
    joint_vel,
    actions,
    last_actions,
    motion_joint_pos,
    motion_joint_vel,
    motion_pos,
    motion_lin_vel,
    motion_ang_vel,
    motion_quat,
    time_steps,
    noise_u,
    rel_pos,
    rel_quat,
    reward,
    done,
    obs,
    critic,
    term_means,
    scratch,
    lane_scratch,
    q_default,
    soft_lo,
    soft_hi,
    noise_level,
):
    n = body_pos.shape[0]
    last_frame = motion_pos.shape[0] - 1
    scratch[:, :] = 0.0
    for i in prange(n):
        tid = numba.get_thread_id()
        t = time_steps[i]
        t1 = min(t + 1, last_frame)
        u = noise_u[i]
        o = obs[i]
        c = critic[i]

        # Anchors: the robot's, the reference's at frame t (stage 1) and at frame t' (stages 2 and 3).
        pa = _vec3(body_pos, i, A)
        qa = _quat(body_quat, i, A)
        ra = quat_to_mat(qa)
        qa_inv = quat_conj(qa)
        pm = _vec3(motion_pos, t, A)
        qm = _quat(motion_quat, t, A)
        pm1 = _vec3(motion_pos, t1, A)
        qm1 = _quat(motion_quat, t1, A)

        # (1) Anchor terms and terminations (spec B3, B4); (R(q)ᵀ g)_z = −R22.
        anchor_err = _sub3(pm, pa)
        f_anchor_pos = math.exp(-_sq_norm3(anchor_err) * INV_VAR_APOS)
        anchor_angle = quat_diff_angle(qm, qa)
        f_anchor_ori = math.exp(-anchor_angle * anchor_angle * INV_VAR_AORI)
        fail = abs(anchor_err[2]) > MAX_ANCHOR_DZ
        fail |= abs(quat_to_mat(qm)[R22] - ra[R22]) > MAX_ANCHOR_GRAVITY_DZ
        for b in END_EFFECTORS:
            fail |= abs(float(rel_pos[i, b, 2]) - float(body_pos[i, b, 2])) > MAX_EE_DZ

        # (2) Yaw alignment of frame t' onto the robot anchor (spec B2).
        delta_q = quat_yaw(quat_mul(qa, quat_conj(qm1)))
        delta_r = quat_to_mat(delta_q)

        # (1) Body terms against the incoming p̃ and the frame-t velocities, while the bodies are gathered into
        # this thread's lanes for the vectorised pass; the store loop after it replaces p̃/q̃, all read by then.
        lanes = lane_scratch[tid]
        pos_err = 0.0
        lin_err = 0.0
        ang_err = 0.0
        for b in range(NB):
            for k in range(3):
                p = float(body_pos[i, b, k])
                e = float(rel_pos[i, b, k]) - p
                pos_err += e * e
                e = float(motion_lin_vel[t, b, k]) - float(body_lin_vel[i, b, k])
                lin_err += e * e
                e = float(motion_ang_vel[t, b, k]) - float(body_ang_vel[i, b, k])
                ang_err += e * e
                lanes[(L_POS + k) * LANES + b] = p
                lanes[(L_MOTION_POS + k) * LANES + b] = motion_pos[t1, b, k]
            for k in range(4):
                lanes[(L_QUAT + k) * LANES + b] = body_quat[i, b, k]
                lanes[(L_REL_QUAT + k) * LANES + b] = rel_quat[i, b, k]
                lanes[(L_MOTION_QUAT + k) * LANES + b] = motion_quat[t1, b, k]
        body_lanes(lanes, pa, pm1, delta_r, delta_q, ra, qa_inv)
        ori_err = 0.0
        for b in range(NB):
            ori_err += lanes[L_ANGLE_SQ * LANES + b]
            for k in range(3):
                rel_pos[i, b, k] = lanes[(L_NEW_REL_POS + k) * LANES + b]
                c[C_BODY_POS + BODY_POS_DIM * b + k] = lanes[(L_BODY_POS_B + k) * LANES + b]
            for k in range(4):
                rel_quat[i, b, k] = lanes[(L_NEW_REL_QUAT + k) * LANES + b]
            for k in range(6):
                c[C_BODY_ORI + BODY_ORI_DIM * b + k] = lanes[(L_BODY_ORI_B + k) * LANES + b]

        f_body_pos = math.exp(-pos_err / NB * INV_VAR_BPOS)
        f_body_ori = math.exp(-ori_err / NB * INV_VAR_BORI)
        f_body_lin = math.exp(-lin_err / NB * INV_VAR_BLIN)
        f_body_ang = math.exp(-ang_err / NB * INV_VAR_BANG)

        # Joints: action rate, soft limits (stage 1) and the joint blocks of both observations (stage 3).
        rate = 0.0
        limit = 0.0
        for j in range(NJ):
            q = float(joint_pos[i, j])
            a = float(actions[i, j])
            da = a - last_actions[i, j]
            rate += da * da
            limit += max(soft_lo[j] - q, 0.0) + max(q - soft_hi[j], 0.0)
            q_ref = float(motion_joint_pos[t1, j])
            qd_ref = float(motion_joint_vel[t1, j])
            o[O_COMMAND + j] = c[C_COMMAND + j] = q_ref
            o[O_COMMAND + NJ + j] = c[C_COMMAND + NJ + j] = qd_ref
            dq = q - q_default[j]
            c[C_JOINT_POS + j] = dq
            o[O_JOINT_POS + j] = dq + noise_level * (2.0 * u[U_JOINT_POS + j] - 1.0) * S_JOINT_POS
            qd = float(joint_vel[i, j])
            c[C_JOINT_VEL + j] = qd
            o[O_JOINT_VEL + j] = qd + noise_level * (2.0 * u[U_JOINT_VEL + j] - 1.0) * S_JOINT_VEL
            o[O_ACTIONS + j] = c[C_ACTIONS + j] = a

        # (3) Anchor and base blocks, at frame t' and in the robot anchor / pelvis frame.
        anchor_pos_b = mat_t_vec(ra, _sub3(pm1, pa))
        anchor_ori_b = quat_to_6d(quat_mul(qa_inv, qm1))
        q_root = _quat(body_quat, i, ROOT)
        lin_vel_b = quat_rotate_inv(q_root, _vec3(body_lin_vel, i, ROOT))
        ang_vel_b = quat_rotate_inv(q_root, _vec3(body_ang_vel, i, ROOT))
        _store(c, C_ANCHOR_POS, anchor_pos_b)
        _store(c, C_ANCHOR_ORI, anchor_ori_b)
        _store(c, C_LIN_VEL, lin_vel_b)
        _store(c, C_ANG_VEL, ang_vel_b)
        _store_noisy(o, O_ANCHOR_POS, anchor_pos_b, u, U_ANCHOR_POS, S_ANCHOR_POS, noise_level)
        _store_noisy(o, O_ANCHOR_ORI, anchor_ori_b, u, U_ANCHOR_ORI, S_ANCHOR_ORI, noise_level)
        _store_noisy(o, O_LIN_VEL, lin_vel_b, u, U_LIN_VEL, S_LIN_VEL, noise_level)
        _store_noisy(o, O_ANG_VEL, ang_vel_b, u, U_ANG_VEL, S_ANG_VEL, noise_level)

        done[i] = 1 if fail else 0
        reward[i] = DT * (
            W_APOS * f_anchor_pos
            + W_AORI * f_anchor_ori
            + W_BPOS * f_body_pos
            + W_BORI * f_body_ori
            + W_BLIN * f_body_lin
            + W_BANG * f_body_ang
            + W_RATE * rate
            + W_LIMIT * limit
        )
        acc = scratch[tid]
        acc[K_APOS] += f_anchor_pos
        acc[K_AORI] += f_anchor_ori
        acc[K_BPOS] += f_body_pos
        acc[K_BORI] += f_body_ori
        acc[K_BLIN] += f_body_lin
        acc[K_BANG] += f_body_ang
        acc[K_RATE] += rate
        acc[K_LIMIT] += limit

    reduce_means(scratch, term_means, n)


class HandwrittenMotion(Kernel):
    parallel = True

    def __init__(self, **kwargs):
        super().__init__(task.CONTRACT, **kwargs)
        self.require_default_plan(g1_motion_plan.DEFAULT_PLAN)
        self._scratch = padded_scratch(max_threads(), N_TERMS)
        self._lanes = padded_scratch(max_threads(), LANE_SIZE)
        self._q_default = task.DEFAULT_POSE.copy()
        self._lo = task.SOFT_LOWER.copy()
        self._hi = task.SOFT_UPPER.copy()

    def _run(self, snap: Mapping[str, np.ndarray], out: dict[str, np.ndarray]) -> None:
        update_state_kernel(
            snap["body_pos_w"],
            snap["body_lin_vel_w"],
            snap["body_ang_vel_w"],
            snap["body_quat_w"],
            snap["joint_pos"],
            snap["joint_vel"],
            snap["actions"],
            snap["last_actions"],
            snap["motion_joint_pos"],
            snap["motion_joint_vel"],
            snap["motion_body_pos_w"],
            snap["motion_body_lin_vel_w"],
            snap["motion_body_ang_vel_w"],
            snap["motion_body_quat_w"],
            snap["time_steps"],
            snap["noise_u"],
            snap["rel_body_pos"],
            snap["rel_body_quat"],
            out["reward"],
            out["done"],
            out["obs"],
            out["critic_obs"],
            out["term_means"],
            self._scratch,
            self._lanes,
            self._q_default,
            self._lo,
            self._hi,
            self.noise_level,
        )
