"""Hand-written fused Numba kernel of the G1 joystick-walk ``update_state`` (spec A3-A5, E2).

One ``prange`` pass over envs: per env it reads the snapshot row once, computes the 15 reward terms, done, both
observations and the foot bookkeeping, advances the phase and writes straight into the preallocated outputs.
Per-term sums for ``term_means`` go to per-thread scratch rows (one cache line apart), reduced after the loop.
Nothing is allocated per call once warm.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numba
import numpy as np
from numba import njit, prange

from kernels.kernel import Kernel, max_threads, padded_scratch
from kernels.scalar import has_nan, reduce_means, swing_height, wrap_2pi
from kernels.tasks import g1_walk as task
from kernels.tasks import g1_walk_plan

DT = task.DT
INV_SIGMA = 1.0 / task.TRACKING_SIGMA
H = task.MAX_FOOT_HEIGHT
FMAX = task.MAX_CONTACT_FORCE
OX, OY, OZ = task.ORIENTATION_TARGET
AIR_MIN, AIR_CLIP = task.FEET_AIR_TIME_MIN, task.FEET_AIR_TIME_CLIP
STILL, MASK_SPEED, SIDESTEP = task.STAND_STILL_CMD_NORM, task.PHASE_MASK_SPEED, task.HIP_SIDESTEP_VY
(
    W_LIN,
    W_ANG,
    W_ANGXY,
    W_ORI,
    W_SLIP,
    W_AIR,
    W_PHASE,
    W_TERM,
    W_STILL,
    W_COLL,
    W_FORCE,
    W_HIP,
    W_KNEE,
    W_LIMITS,
    W_POSE,
) = task.REWARD_SCALES.values()
N_TERMS = len(task.TERMS)
NJ = task.NUM_JOINTS
N_LINVEL, N_GYRO, N_GRAV, N_QPOS, N_QVEL = (task.NOISE_SCALES[k] for k in task.NOISE_COLUMNS)


# fastmath without nnan/ninf: reductions may reassociate (so they vectorise), NaN checks stay exact.
@njit(parallel=True, cache=True, fastmath={"nsz", "arcp", "contract", "reassoc"})
def update_state_kernel(
    qpos,
    qvel,
    sd,
    actuator_force,
    feet_pos,
    last_actions,
    commands,
    phase_dt,
    noise_u,
    phase,
    air_time,
    last_contact,
    peak,
    reward,
    done,
    obs,
    priv,
    term_means,
    scratch,
    q0,
    soft_lo,
    soft_hi,
    noise_level,
):
    n = qpos.shape[0]
    scratch[:, :] = 0.0
    # Noise x + level * (2u - 1) * scale as x + (a * u - b): a = 2 * level * scale, b = level * scale.
    a_qpos, b_qpos = 2.0 * noise_level * N_QPOS, noise_level * N_QPOS
    a_qvel, b_qvel = 2.0 * noise_level * N_QVEL, noise_level * N_QVEL
    a_linvel, b_linvel = 2.0 * noise_level * N_LINVEL, noise_level * N_LINVEL
    a_gyro, b_gyro = 2.0 * noise_level * N_GYRO, noise_level * N_GYRO
    a_grav, b_grav = 2.0 * noise_level * N_GRAV, noise_level * N_GRAV
    for i in prange(n):
        tid = numba.get_thread_id()
        u = noise_u[i]
        o = obs[i]
        p = priv[i]

        # Foot bookkeeping 1-3 (spec A4).
        c0 = sd[i, 68] > 0.0
        c1 = sd[i, 69] > 0.0
        c0f = 1.0 if c0 else 0.0
        c1f = 1.0 if c1 else 0.0
        air0 = air_time[i, 0]
        air1 = air_time[i, 1]
        first0 = air0 > 0.0 and (c0 or last_contact[i, 0] != 0)
        first1 = air1 > 0.0 and (c1 or last_contact[i, 1] != 0)
        air0 += DT
        air1 += DT
        z0 = feet_pos[i, 0, 2]
        z1 = feet_pos[i, 1, 2]
        peak0 = max(peak[i, 0], z0)
        peak1 = max(peak[i, 1], z1)

        # Joints: NaN check, deviations, limits, joint observations; simple loops the compiler vectorises.
        nan = has_nan(qpos[i]) or has_nan(qvel[i])
        sum_abs = 0.0
        sum_sq = 0.0
        limits = 0.0
        for j in range(NJ):
            dq = qpos[i, 7 + j] - q0[j]
            sum_abs += abs(dq)
            sum_sq += dq * dq
            limits += max(soft_lo[j] - qpos[i, 7 + j], 0.0) + max(qpos[i, 7 + j] - soft_hi[j], 0.0)
        for j in range(NJ):
            v = qpos[i, 7 + j] + (a_qpos * u[9 + j] - b_qpos) - q0[j]
            o[12 + j] = v
            p[12 + j] = v
        for j in range(NJ):
            v = qvel[i, 6 + j] + (a_qvel * u[38 + j] - b_qvel)
            o[41 + j] = v
            p[41 + j] = v
        for j in range(NJ):
            v = last_actions[i, j]
            o[70 + j] = v
            p[70 + j] = v
        for j in range(NJ):
            p[118 + j] = qpos[i, 7 + j] - q0[j]
        for j in range(NJ):
            p[147 + j] = qvel[i, 6 + j]
        for j in range(NJ):
            p[177 + j] = actuator_force[i, j]
        d_hip0 = abs(qpos[i, 8] - q0[1])
        d_hip1 = abs(qpos[i, 9] - q0[2])
        d_hip2 = abs(qpos[i, 14] - q0[7])
        d_hip3 = abs(qpos[i, 15] - q0[8])
        knee = abs(qpos[i, 10] - q0[3]) + abs(qpos[i, 16] - q0[9])

        # Termination (spec A5).
        is_done = sd[i, 2] < 0.0 or sd[i, 70] > 0.0 or sd[i, 71] > 0.0 or sd[i, 72] > 0.0 or nan

        # Base quantities.
        cx = commands[i, 0]
        cy = commands[i, 1]
        cz = commands[i, 2]
        cmd_norm = math.sqrt(cx * cx + cy * cy + cz * cz)
        vx = sd[i, 6]
        vy = sd[i, 7]
        vz = sd[i, 8]
        gx = sd[i, 18]
        gy = sd[i, 19]
        gz = sd[i, 20]
        qw = sd[i, 34]
        qx = sd[i, 35]
        qy = sd[i, 36]
        qz = sd[i, 37]
        grav_x = -2.0 * (qx * qz - qw * qy)
        grav_y = -2.0 * (qy * qz + qw * qx)
        grav_z = -(1.0 - 2.0 * (qx * qx + qy * qy))
        speed_xy = math.sqrt(sd[i, 41] * sd[i, 41] + sd[i, 42] * sd[i, 42])

        # Reward terms (spec A4), unweighted.
        f_lin = math.exp(-((cx - vx) * (cx - vx) + (cy - vy) * (cy - vy)) * INV_SIGMA)
        f_ang = math.exp(-(cz - gz) * (cz - gz) * INV_SIGMA)
        f_angxy = sd[i, 44] * sd[i, 44] + sd[i, 45] * sd[i, 45]
        f_ori = (sd[i, 0] - OX) ** 2 + (sd[i, 1] - OY) ** 2 + (sd[i, 2] - OZ) ** 2
        f_slip = speed_xy * (c0f + c1f)
        f_air = 0.0
        if first0:
            f_air += min(air0 - AIR_MIN, AIR_CLIP)
        if first1:
            f_air += min(air1 - AIR_MIN, AIR_CLIP)
        e0 = z0 - swing_height(phase[i, 0], H)
        e1 = z1 - swing_height(phase[i, 1], H)
        moving = speed_xy > MASK_SPEED or abs(sd[i, 49]) > MASK_SPEED or cmd_norm > STILL
        f_phase = math.exp(-(e0 * e0 + e1 * e1) / 0.01) if moving else 0.0
        f_term = 1.0 if is_done else 0.0
        f_still = sum_abs if cmd_norm < STILL else 0.0
        f_coll = 1.0 if (sd[i, 73] > 0.0 or sd[i, 74] > 0.0) else 0.0
        f_force = max(abs(sd[i, 64]) - FMAX, 0.0) + max(abs(sd[i, 67]) - FMAX, 0.0)
        # Sidestepping (cmd_vy > 0.1) frees the hip_roll joints: weights (0, 1, 0, 1).
        f_hip = d_hip1 + d_hip3 if cy > SIDESTEP else d_hip0 + d_hip1 + d_hip2 + d_hip3

        reward[i] = DT * (
            W_LIN * f_lin
            + W_ANG * f_ang
            + W_ANGXY * f_angxy
            + W_ORI * f_ori
            + W_SLIP * f_slip
            + W_AIR * f_air
            + W_PHASE * f_phase
            + W_TERM * f_term
            + W_STILL * f_still
            + W_COLL * f_coll
            + W_FORCE * f_force
            + W_HIP * f_hip
            + W_KNEE * knee
            + W_LIMITS * limits
            + W_POSE * sum_sq
        )
        done[i] = 1 if is_done else 0
        acc = scratch[tid]
        acc[0] += f_lin
        acc[1] += f_ang
        acc[2] += f_angxy
        acc[3] += f_ori
        acc[4] += f_slip
        acc[5] += f_air
        acc[6] += f_phase
        acc[7] += f_term
        acc[8] += f_still
        acc[9] += f_coll
        acc[10] += f_force
        acc[11] += f_hip
        acc[12] += knee
        acc[13] += limits
        acc[14] += sum_sq

        # Observation `state` (spec A3); the phase is the one before its advance.
        o[0] = vx + (a_linvel * u[0] - b_linvel)
        o[1] = vy + (a_linvel * u[1] - b_linvel)
        o[2] = vz + (a_linvel * u[2] - b_linvel)
        o[3] = gx + (a_gyro * u[3] - b_gyro)
        o[4] = gy + (a_gyro * u[4] - b_gyro)
        o[5] = gz + (a_gyro * u[5] - b_gyro)
        o[6] = grav_x + (a_grav * u[6] - b_grav)
        o[7] = grav_y + (a_grav * u[7] - b_grav)
        o[8] = grav_z + (a_grav * u[8] - b_grav)
        o[9] = cx
        o[10] = cy
        o[11] = cz
        ph0 = phase[i, 0]
        ph1 = phase[i, 1]
        o[99] = math.cos(ph0)
        o[100] = math.cos(ph1)
        o[101] = math.sin(ph0)
        o[102] = math.sin(ph1)
        for k in range(12):
            p[k] = o[k]
        for k in range(99, 103):
            p[k] = o[k]

        # Privileged tail (spec A3), noise-free; the joint blocks were written in the joint loop.
        p[103] = gx
        p[104] = gy
        p[105] = gz
        p[106] = sd[i, 12]
        p[107] = sd[i, 13]
        p[108] = sd[i, 14]
        p[109] = grav_x
        p[110] = grav_y
        p[111] = grav_z
        p[112] = vx
        p[113] = vy
        p[114] = vz
        p[115] = sd[i, 47]
        p[116] = sd[i, 48]
        p[117] = sd[i, 49]
        p[176] = qpos[i, 2]
        p[206] = c0f
        p[207] = c1f
        for k in range(6):
            p[208 + k] = sd[i, 50 + k]
        p[214] = air0
        p[215] = air1

        # Bookkeeping 5 and the phase advance.
        air_time[i, 0] = 0.0 if c0 else air0
        air_time[i, 1] = 0.0 if c1 else air1
        last_contact[i, 0] = 1 if c0 else 0
        last_contact[i, 1] = 1 if c1 else 0
        peak[i, 0] = 0.0 if c0 else peak0
        peak[i, 1] = 0.0 if c1 else peak1
        dphi = phase_dt[i]
        phase[i, 0] = wrap_2pi(ph0 + dphi + math.pi) - math.pi
        phase[i, 1] = wrap_2pi(ph1 + dphi + math.pi) - math.pi

    reduce_means(scratch, term_means, n)


class HandwrittenWalk(Kernel):
    impl = "handwritten"
    parallel = True

    def __init__(self, **kwargs):
        super().__init__(task.CONTRACT, **kwargs)
        self.require_default_plan(g1_walk_plan.DEFAULT_PLAN)
        self._scratch = padded_scratch(max_threads(), N_TERMS)
        self._q0 = task.DEFAULT_POSE.copy()
        self._lo = task.SOFT_LOWER.copy()
        self._hi = task.SOFT_UPPER.copy()

    def _run(self, snap: Mapping[str, np.ndarray], out: dict[str, np.ndarray]) -> None:
        update_state_kernel(
            snap["qpos"],
            snap["qvel"],
            snap["sensordata"],
            snap["actuator_force"],
            snap["feet_pos"],
            snap["last_actions"],
            snap["commands"],
            snap["phase_dt"],
            snap["noise_u"],
            snap["phase"],
            snap["feet_air_time"],
            snap["last_contact"],
            snap["feet_peak_height"],
            out["reward"],
            out["done"],
            out["obs"],
            out["privileged_obs"],
            out["term_means"],
            self._scratch,
            self._q0,
            self._lo,
            self._hi,
            self.noise_level,
        )
