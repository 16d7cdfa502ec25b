"""One compiled g1_motion kernel for any plan (implementation ``assembled_generic``): the generic-runtime design.

This is the design a first plan-driven effort used, kept as a named implementation so the gate can show that it
catches its cost. It is written the way a careful engineer would write a generic runtime, not slowed on
purpose: one kernel, compiled once, serves every plan because everything plan-specific is data read at run time:

- inputs, state and outputs are passed as tuples;
- every library term sits behind a runtime switch (``if active[k]``), with its weight and parameters read from
  arrays (parameters by name: ``kernels.assembled.generic_tables``), and its log slot looked up in a table; terminations are switched and their thresholds read the same way;
- the body errors and the joint offsets q - q_default go through an intermediate per-env workspace (written once,
  read back by every term and block that needs them);
- observation blocks are routed to their output columns through a table, with noise scales read from an array;
  ``kernels.assembled.generic_tables`` builds every table, for both tasks (parameters are read by name).

The spec E3 order holds: the body errors are read from the incoming p̃/q̃ in the same body pass that replaces
them, and the terminations that read p̃ run before it. What it cannot have, and what ``assembled`` has: constant
propagation of weights, parameters and offsets, dead-code elimination of inactive terms, no intermediate
write-back, and the vectorised lane pass over the bodies (this kernel keeps one scalar body pass).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numba
import numpy as np
from numba import njit, prange

from kernels.assembled import generic_tables as tables
from kernels.assembled.generic_tables import emit, param_column
from kernels.geometry import (
    R22,
    mat_t_vec,
    mat_vec,
    quat_at,
    quat_conj,
    quat_diff_angle,
    quat_mul,
    quat_rotate_inv,
    quat_to_6d,
    quat_to_mat,
    quat_yaw,
    sq_norm3,
    sub3,
    vec3_at,
)
from kernels.kernel import Kernel, max_threads, padded_scratch
from kernels.scalar import reduce_means
from kernels.tasks.g1_motion import constants as task
from kernels.tasks.g1_motion import plan as plan_lib
from kernels.tasks.g1_motion.constants import BODY_ORI_DIM, BODY_POS_DIM

LIBRARY = plan_lib.LIBRARY
REWARDS = tuple(LIBRARY["reward"])
TERMINATIONS = tuple(LIBRARY["termination"])
OBSERVATIONS = tuple(LIBRARY["observation"])
INPUTS = tuple(spec.name for spec in task.CONTRACT.inputs)
NB, NJ = task.NUM_BODIES, task.NUM_JOINTS
A, ROOT, END_EFFECTORS = task.ANCHOR, task.ROOT, task.END_EFFECTORS

# Library indices as module constants, so the kernel reads like the library.
GA_POS, GA_ORI, B_POS, B_ORI, B_LIN, B_ANG, RATE, LIMIT = range(len(REWARDS))
assert REWARDS[GA_POS] == "motion_global_anchor_pos" and REWARDS[LIMIT] == "joint_limit"
T_ANCHOR_POS, T_ANCHOR_ORI, T_EE = range(len(TERMINATIONS))
assert TERMINATIONS[T_EE] == "ee_body_pos"
(
    O_COMMAND,
    O_ANCHOR_POS,
    O_ANCHOR_ORI,
    O_BODY_POS,
    O_BODY_ORI,
    O_LIN_VEL,
    O_ANG_VEL,
    O_JOINT_POS,
    O_JOINT_VEL,
    O_ACTIONS,
) = range(len(OBSERVATIONS))
assert OBSERVATIONS[O_BODY_ORI] == "body_ori" and OBSERVATIONS[O_ACTIONS] == "actions"
# Parameter columns, by name (kernels.assembled.generic_tables.param_column).
STD = param_column(plan_lib.ExpKernel, "std")
THRESHOLD = param_column(plan_lib.Threshold, "threshold")
# Workspace columns: the four body-error sums, then q - q_default per joint.
W_POS, W_ORI, W_LIN, W_ANG, W_DQ = range(5)
WORKSPACE = W_DQ + NJ


@njit(parallel=True, cache=True)
def generic_kernel(inputs, state, outs, reward, done, term_means, tables, workspace, scratch, level, dt):
    (
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
    ) = inputs
    rel_pos, rel_quat = state
    (
        weights,
        active,
        slot,
        params,
        term_active,
        term_params,
        route_term,
        route_column,
        route_noise,
        noise_column,
        q0,
        soft_lo,
        soft_hi,
    ) = tables
    n = body_pos.shape[0]
    last_frame = motion_pos.shape[0] - 1
    scratch[:, :] = 0.0
    for i in prange(n):
        tid = numba.get_thread_id()
        acc = scratch[tid]
        ws = workspace[i]
        t = time_steps[i]
        t1 = min(t + 1, last_frame)
        pa = vec3_at(body_pos, i, A)
        qa = quat_at(body_quat, i, A)
        ra = quat_to_mat(qa)
        qa_inv = quat_conj(qa)
        pm = vec3_at(motion_pos, t, A)
        qm = quat_at(motion_quat, t, A)
        pm1 = vec3_at(motion_pos, t1, A)
        qm1 = quat_at(motion_quat, t1, A)

        # (1) Terminations, against frame t and the incoming p̃.
        is_done = False
        if term_active[T_ANCHOR_POS] and abs(pm[2] - pa[2]) > term_params[T_ANCHOR_POS, THRESHOLD]:
            is_done = True
        if (
            term_active[T_ANCHOR_ORI]
            and abs(quat_to_mat(qm)[R22] - ra[R22]) > term_params[T_ANCHOR_ORI, THRESHOLD]
        ):
            is_done = True
        if term_active[T_EE]:
            for b in END_EFFECTORS:
                if abs(float(rel_pos[i, b, 2]) - float(body_pos[i, b, 2])) > term_params[T_EE, THRESHOLD]:
                    is_done = True

        # Body pass: errors against the incoming p̃/q̃ into the workspace (1), then p̃/q̃ from frame t' (2).
        delta_q = quat_yaw(quat_mul(qa, quat_conj(qm1)))
        delta_r = quat_to_mat(delta_q)
        pos_err = 0.0
        ori_err = 0.0
        lin_err = 0.0
        ang_err = 0.0
        for b in range(NB):
            pos_err += sq_norm3(sub3(vec3_at(rel_pos, i, b), vec3_at(body_pos, i, b)))
            angle = quat_diff_angle(quat_at(rel_quat, i, b), quat_at(body_quat, i, b))
            ori_err += angle * angle
            lin_err += sq_norm3(sub3(vec3_at(motion_lin_vel, t, b), vec3_at(body_lin_vel, i, b)))
            ang_err += sq_norm3(sub3(vec3_at(motion_ang_vel, t, b), vec3_at(body_ang_vel, i, b)))
            offset = mat_vec(delta_r, sub3(vec3_at(motion_pos, t1, b), pm1))
            rel_pos[i, b, 0] = pa[0] + offset[0]
            rel_pos[i, b, 1] = pa[1] + offset[1]
            rel_pos[i, b, 2] = pm1[2] + offset[2]
            q_rel = quat_mul(delta_q, quat_at(motion_quat, t1, b))
            for k in range(4):
                rel_quat[i, b, k] = q_rel[k]
        ws[W_POS] = pos_err / NB
        ws[W_ORI] = ori_err / NB
        ws[W_LIN] = lin_err / NB
        ws[W_ANG] = ang_err / NB
        for j in range(NJ):
            ws[W_DQ + j] = joint_pos[i, j] - q0[j]

        # (1) Reward terms: switched, weighted and parameterised at run time.
        r = 0.0
        for k in range(len(weights)):
            if not active[k]:
                continue
            p = params[k]
            f = 0.0
            if k == GA_POS:
                f = math.exp(-sq_norm3(sub3(pm, pa)) / (p[STD] * p[STD]))
            elif k == GA_ORI:
                angle = quat_diff_angle(qm, qa)
                f = math.exp(-angle * angle / (p[STD] * p[STD]))
            elif k == B_POS:
                f = math.exp(-ws[W_POS] / (p[STD] * p[STD]))
            elif k == B_ORI:
                f = math.exp(-ws[W_ORI] / (p[STD] * p[STD]))
            elif k == B_LIN:
                f = math.exp(-ws[W_LIN] / (p[STD] * p[STD]))
            elif k == B_ANG:
                f = math.exp(-ws[W_ANG] / (p[STD] * p[STD]))
            elif k == RATE:
                for j in range(NJ):
                    da = float(actions[i, j]) - float(last_actions[i, j])
                    f += da * da
            elif k == LIMIT:
                for j in range(NJ):
                    q = float(joint_pos[i, j])
                    f += max(soft_lo[j] - q, 0.0) + max(q - soft_hi[j], 0.0)
            r += weights[k] * f
            acc[slot[k]] += f
        reward[i] = dt * r
        done[i] = 1 if is_done else 0

        # (3) Observation blocks at frame t', routed to their columns.
        for row in range(route_term.shape[0]):
            o = route_term[row]
            cols = route_column[row]
            nc = noise_column[row]
            ns = route_noise[row]
            if o == O_COMMAND:
                for k in range(NJ):
                    q_ref, qd_ref = float(motion_joint_pos[t1, k]), float(motion_joint_vel[t1, k])
                    emit(outs, cols, k, q_ref, noise_u, i, nc, ns, level)
                    emit(outs, cols, NJ + k, qd_ref, noise_u, i, nc, ns, level)
            elif o == O_ANCHOR_POS:
                v = mat_t_vec(ra, sub3(pm1, pa))
                for k in range(3):
                    emit(outs, cols, k, v[k], noise_u, i, nc, ns, level)
            elif o == O_ANCHOR_ORI:
                v6 = quat_to_6d(quat_mul(qa_inv, qm1))
                for k in range(6):
                    emit(outs, cols, k, v6[k], noise_u, i, nc, ns, level)
            elif o == O_BODY_POS:
                for b in range(NB):
                    v = mat_t_vec(ra, sub3(vec3_at(body_pos, i, b), pa))
                    for k in range(3):
                        emit(outs, cols, BODY_POS_DIM * b + k, v[k], noise_u, i, nc, ns, level)
            elif o == O_BODY_ORI:
                for b in range(NB):
                    v6 = quat_to_6d(quat_mul(qa_inv, quat_at(body_quat, i, b)))
                    for k in range(6):
                        emit(outs, cols, BODY_ORI_DIM * b + k, v6[k], noise_u, i, nc, ns, level)
            elif o == O_LIN_VEL:
                v = quat_rotate_inv(quat_at(body_quat, i, ROOT), vec3_at(body_lin_vel, i, ROOT))
                for k in range(3):
                    emit(outs, cols, k, v[k], noise_u, i, nc, ns, level)
            elif o == O_ANG_VEL:
                v = quat_rotate_inv(quat_at(body_quat, i, ROOT), vec3_at(body_ang_vel, i, ROOT))
                for k in range(3):
                    emit(outs, cols, k, v[k], noise_u, i, nc, ns, level)
            elif o == O_JOINT_POS:
                for k in range(NJ):
                    emit(outs, cols, k, ws[W_DQ + k], noise_u, i, nc, ns, level)
            elif o == O_JOINT_VEL:
                for k in range(NJ):
                    emit(outs, cols, k, float(joint_vel[i, k]), noise_u, i, nc, ns, level)
            elif o == O_ACTIONS:
                for k in range(NJ):
                    emit(outs, cols, k, float(actions[i, k]), noise_u, i, nc, ns, level)

    reduce_means(scratch, term_means, n)


class GenericMotion(Kernel):
    """The plan becomes tables; the compiled kernel never changes."""

    parallel = True

    def __init__(self, **kwargs):
        super().__init__(task.CONTRACT, **kwargs)
        plan = self.plan
        routes = tables.observations(plan, LIBRARY["observation"], repeats=False)
        self._tables = (
            *tables.rewards(plan, LIBRARY["reward"]),
            *tables.terminations(plan, LIBRARY["termination"]),
            routes.term,
            routes.column,
            routes.noise,
            routes.noise_column,
            task.DEFAULT_POSE.copy(),
            task.SOFT_LOWER.copy(),
            task.SOFT_UPPER.copy(),
        )
        self._workspace = np.empty((self.num_envs, WORKSPACE))
        self._scratch = padded_scratch(max_threads(), max(1, len(plan.rewards)))
        self._spare = np.empty((self.num_envs, 0), dtype=np.float32)

    def _run(self, snap: Mapping[str, np.ndarray], out: dict[str, np.ndarray]) -> None:
        generic_kernel(
            tuple(snap[name] for name in INPUTS),
            (snap["rel_body_pos"], snap["rel_body_quat"]),
            tables.outputs(self.plan, out, self._spare),
            out["reward"],
            out["done"],
            out["term_means"],
            self._tables,
            self._workspace,
            self._scratch,
            self.noise_level,
            self.plan.dt,
        )
