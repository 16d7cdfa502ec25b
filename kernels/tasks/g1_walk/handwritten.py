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
from kernels.tasks.g1_walk import constants as task
from kernels.tasks.g1_walk import plan as g1_walk_plan
from kernels.tasks.g1_walk.constants import (
    J_L_HIP_ROLL,
    J_L_HIP_YAW,
    J_L_KNEE,
    J_R_HIP_ROLL,
    J_R_HIP_YAW,
    J_R_KNEE,
    OBS_COMMAND,
    OBS_DIM,
    OBS_GRAVITY,
    OBS_GYRO,
    OBS_JOINT_POS,
    OBS_JOINT_VEL,
    OBS_LAST_ACT,
    OBS_LINVEL,
    OBS_PHASE,
    PRIV_ACCEL,
    PRIV_ACT_FORCE,
    PRIV_AIR_TIME,
    PRIV_ANGVEL,
    PRIV_CONTACT,
    PRIV_FOOT_LINVEL,
    PRIV_GRAVITY,
    PRIV_GYRO,
    PRIV_HEIGHT,
    PRIV_JOINT_POS,
    PRIV_JOINT_VEL,
    PRIV_LINVEL,
    QPOS_BASE_Z,
    QPOS_JOINTS,
    QVEL_JOINTS,
    S_ACCEL_PELVIS,
    S_FOOT_FLOOR_L,
    S_FOOT_FLOOR_R,
    S_FOOT_FOOT,
    S_FOOT_FORCE_Z_L,
    S_FOOT_FORCE_Z_R,
    S_FOOT_LINVEL,
    S_FOOT_SHIN_L,
    S_FOOT_SHIN_R,
    S_GLOBAL_ANGVEL_PELVIS,
    S_GLOBAL_ANGVEL_TORSO,
    S_GLOBAL_LINVEL_PELVIS,
    S_GYRO_PELVIS,
    S_HAND_THIGH_L,
    S_HAND_THIGH_R,
    S_LOCAL_LINVEL_PELVIS,
    S_ORIENTATION_PELVIS,
    S_UPVECTOR_TORSO,
    U_GRAVITY,
    U_GYRO,
    U_JOINT_POS,
    U_JOINT_VEL,
    U_LINVEL,
)

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
# term_means slots, in the order of task.TERMS (the order of the weights above)
(
    K_LIN,
    K_ANG,
    K_ANGXY,
    K_ORI,
    K_SLIP,
    K_AIR,
    K_PHASE,
    K_TERM,
    K_STILL,
    K_COLL,
    K_FORCE,
    K_HIP,
    K_KNEE,
    K_LIMITS,
    K_POSE,
) = range(N_TERMS)
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
        c0 = sd[i, S_FOOT_FLOOR_L] > 0.0
        c1 = sd[i, S_FOOT_FLOOR_R] > 0.0
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
            dq = qpos[i, QPOS_JOINTS + j] - q0[j]
            sum_abs += abs(dq)
            sum_sq += dq * dq
            limits += max(soft_lo[j] - qpos[i, QPOS_JOINTS + j], 0.0) + max(
                qpos[i, QPOS_JOINTS + j] - soft_hi[j], 0.0
            )
        for j in range(NJ):
            v = qpos[i, QPOS_JOINTS + j] + (a_qpos * u[U_JOINT_POS + j] - b_qpos) - q0[j]
            o[OBS_JOINT_POS + j] = v
            p[OBS_JOINT_POS + j] = v
        for j in range(NJ):
            v = qvel[i, QVEL_JOINTS + j] + (a_qvel * u[U_JOINT_VEL + j] - b_qvel)
            o[OBS_JOINT_VEL + j] = v
            p[OBS_JOINT_VEL + j] = v
        for j in range(NJ):
            v = last_actions[i, j]
            o[OBS_LAST_ACT + j] = v
            p[OBS_LAST_ACT + j] = v
        for j in range(NJ):
            p[PRIV_JOINT_POS + j] = qpos[i, QPOS_JOINTS + j] - q0[j]
        for j in range(NJ):
            p[PRIV_JOINT_VEL + j] = qvel[i, QVEL_JOINTS + j]
        for j in range(NJ):
            p[PRIV_ACT_FORCE + j] = actuator_force[i, j]
        d_hip0 = abs(qpos[i, QPOS_JOINTS + J_L_HIP_ROLL] - q0[J_L_HIP_ROLL])
        d_hip1 = abs(qpos[i, QPOS_JOINTS + J_L_HIP_YAW] - q0[J_L_HIP_YAW])
        d_hip2 = abs(qpos[i, QPOS_JOINTS + J_R_HIP_ROLL] - q0[J_R_HIP_ROLL])
        d_hip3 = abs(qpos[i, QPOS_JOINTS + J_R_HIP_YAW] - q0[J_R_HIP_YAW])
        knee = abs(qpos[i, QPOS_JOINTS + J_L_KNEE] - q0[J_L_KNEE]) + abs(
            qpos[i, QPOS_JOINTS + J_R_KNEE] - q0[J_R_KNEE]
        )

        # Termination (spec A5).
        is_done = (
            sd[i, S_UPVECTOR_TORSO + 2] < 0.0
            or sd[i, S_FOOT_FOOT] > 0.0
            or sd[i, S_FOOT_SHIN_L] > 0.0
            or sd[i, S_FOOT_SHIN_R] > 0.0
            or nan
        )

        # Base quantities.
        cx = commands[i, 0]
        cy = commands[i, 1]
        cz = commands[i, 2]
        cmd_norm = math.sqrt(cx * cx + cy * cy + cz * cz)
        vx = sd[i, S_LOCAL_LINVEL_PELVIS]
        vy = sd[i, S_LOCAL_LINVEL_PELVIS + 1]
        vz = sd[i, S_LOCAL_LINVEL_PELVIS + 2]
        gx = sd[i, S_GYRO_PELVIS]
        gy = sd[i, S_GYRO_PELVIS + 1]
        gz = sd[i, S_GYRO_PELVIS + 2]
        qw = sd[i, S_ORIENTATION_PELVIS]
        qx = sd[i, S_ORIENTATION_PELVIS + 1]
        qy = sd[i, S_ORIENTATION_PELVIS + 2]
        qz = sd[i, S_ORIENTATION_PELVIS + 3]
        grav_x = -2.0 * (qx * qz - qw * qy)
        grav_y = -2.0 * (qy * qz + qw * qx)
        grav_z = -(1.0 - 2.0 * (qx * qx + qy * qy))
        speed_xy = math.sqrt(
            sd[i, S_GLOBAL_LINVEL_PELVIS] * sd[i, S_GLOBAL_LINVEL_PELVIS]
            + sd[i, S_GLOBAL_LINVEL_PELVIS + 1] * sd[i, S_GLOBAL_LINVEL_PELVIS + 1]
        )

        # Reward terms (spec A4), unweighted.
        f_lin = math.exp(-((cx - vx) * (cx - vx) + (cy - vy) * (cy - vy)) * INV_SIGMA)
        f_ang = math.exp(-(cz - gz) * (cz - gz) * INV_SIGMA)
        f_angxy = (
            sd[i, S_GLOBAL_ANGVEL_TORSO] * sd[i, S_GLOBAL_ANGVEL_TORSO]
            + sd[i, S_GLOBAL_ANGVEL_TORSO + 1] * sd[i, S_GLOBAL_ANGVEL_TORSO + 1]
        )
        f_ori = (
            (sd[i, S_UPVECTOR_TORSO] - OX) ** 2
            + (sd[i, S_UPVECTOR_TORSO + 1] - OY) ** 2
            + (sd[i, S_UPVECTOR_TORSO + 2] - OZ) ** 2
        )
        f_slip = speed_xy * (c0f + c1f)
        f_air = 0.0
        if first0:
            f_air += min(air0 - AIR_MIN, AIR_CLIP)
        if first1:
            f_air += min(air1 - AIR_MIN, AIR_CLIP)
        e0 = z0 - swing_height(phase[i, 0], H)
        e1 = z1 - swing_height(phase[i, 1], H)
        moving = (
            speed_xy > MASK_SPEED or abs(sd[i, S_GLOBAL_ANGVEL_PELVIS + 2]) > MASK_SPEED or cmd_norm > STILL
        )
        f_phase = math.exp(-(e0 * e0 + e1 * e1) / 0.01) if moving else 0.0
        f_term = 1.0 if is_done else 0.0
        f_still = sum_abs if cmd_norm < STILL else 0.0
        f_coll = 1.0 if (sd[i, S_HAND_THIGH_L] > 0.0 or sd[i, S_HAND_THIGH_R] > 0.0) else 0.0
        f_force = max(abs(sd[i, S_FOOT_FORCE_Z_L]) - FMAX, 0.0) + max(
            abs(sd[i, S_FOOT_FORCE_Z_R]) - FMAX, 0.0
        )
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
        acc[K_LIN] += f_lin
        acc[K_ANG] += f_ang
        acc[K_ANGXY] += f_angxy
        acc[K_ORI] += f_ori
        acc[K_SLIP] += f_slip
        acc[K_AIR] += f_air
        acc[K_PHASE] += f_phase
        acc[K_TERM] += f_term
        acc[K_STILL] += f_still
        acc[K_COLL] += f_coll
        acc[K_FORCE] += f_force
        acc[K_HIP] += f_hip
        acc[K_KNEE] += knee
        acc[K_LIMITS] += limits
        acc[K_POSE] += sum_sq

        # Observation `state` (spec A3); the phase is the one before its advance.
        o[OBS_LINVEL] = vx + (a_linvel * u[U_LINVEL] - b_linvel)
        o[OBS_LINVEL + 1] = vy + (a_linvel * u[U_LINVEL + 1] - b_linvel)
        o[OBS_LINVEL + 2] = vz + (a_linvel * u[U_LINVEL + 2] - b_linvel)
        o[OBS_GYRO] = gx + (a_gyro * u[U_GYRO] - b_gyro)
        o[OBS_GYRO + 1] = gy + (a_gyro * u[U_GYRO + 1] - b_gyro)
        o[OBS_GYRO + 2] = gz + (a_gyro * u[U_GYRO + 2] - b_gyro)
        o[OBS_GRAVITY] = grav_x + (a_grav * u[U_GRAVITY] - b_grav)
        o[OBS_GRAVITY + 1] = grav_y + (a_grav * u[U_GRAVITY + 1] - b_grav)
        o[OBS_GRAVITY + 2] = grav_z + (a_grav * u[U_GRAVITY + 2] - b_grav)
        o[OBS_COMMAND] = cx
        o[OBS_COMMAND + 1] = cy
        o[OBS_COMMAND + 2] = cz
        ph0 = phase[i, 0]
        ph1 = phase[i, 1]
        o[OBS_PHASE] = math.cos(ph0)
        o[OBS_PHASE + 1] = math.cos(ph1)
        o[OBS_PHASE + 2] = math.sin(ph0)
        o[OBS_PHASE + 3] = math.sin(ph1)
        for k in range(OBS_JOINT_POS):  # linvel, gyro, gravity, command: the columns before the joint blocks
            p[k] = o[k]
        for k in range(OBS_PHASE, OBS_DIM):
            p[k] = o[k]

        # Privileged tail (spec A3), noise-free; the joint blocks were written in the joint loop.
        p[PRIV_GYRO] = gx
        p[PRIV_GYRO + 1] = gy
        p[PRIV_GYRO + 2] = gz
        p[PRIV_ACCEL] = sd[i, S_ACCEL_PELVIS]
        p[PRIV_ACCEL + 1] = sd[i, S_ACCEL_PELVIS + 1]
        p[PRIV_ACCEL + 2] = sd[i, S_ACCEL_PELVIS + 2]
        p[PRIV_GRAVITY] = grav_x
        p[PRIV_GRAVITY + 1] = grav_y
        p[PRIV_GRAVITY + 2] = grav_z
        p[PRIV_LINVEL] = vx
        p[PRIV_LINVEL + 1] = vy
        p[PRIV_LINVEL + 2] = vz
        p[PRIV_ANGVEL] = sd[i, S_GLOBAL_ANGVEL_PELVIS]
        p[PRIV_ANGVEL + 1] = sd[i, S_GLOBAL_ANGVEL_PELVIS + 1]
        p[PRIV_ANGVEL + 2] = sd[i, S_GLOBAL_ANGVEL_PELVIS + 2]
        p[PRIV_HEIGHT] = qpos[i, QPOS_BASE_Z]
        p[PRIV_CONTACT] = c0f
        p[PRIV_CONTACT + 1] = c1f
        for k in range(6):
            p[PRIV_FOOT_LINVEL + k] = sd[i, S_FOOT_LINVEL + k]
        p[PRIV_AIR_TIME] = air0
        p[PRIV_AIR_TIME + 1] = air1

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
