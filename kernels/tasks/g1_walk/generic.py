"""One compiled g1_walk kernel for any plan (implementation ``assembled_generic``): the generic-runtime design.

This is the design a first plan-driven effort used, kept as a named implementation so the gate can show that it
catches its cost. It is written the way a careful engineer would write a generic runtime, not slowed on
purpose: one kernel, compiled once, serves every plan because everything plan-specific is data read at run time:

- inputs, state and outputs are passed as tuples;
- every library term sits behind a runtime switch (``if active[k]``), with its weight and parameters read from
  arrays (parameters by name: ``kernels.assembled.generic_tables``), and its log slot looked up in a table;
- joint-position differences go through an intermediate per-env workspace (written once, read by every term that
  needs them);
- observation blocks are routed to their output columns through a table, noise scales read from an array;
  ``kernels.assembled.generic_tables`` builds every table, for both tasks.

What it cannot have, and what ``assembled`` has: constant propagation of weights, parameters and offsets, dead
code elimination of inactive terms, and no intermediate write-back.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numba
import numpy as np
from numba import njit, prange

from kernels.assembled import generic_tables as tables
from kernels.assembled.generic_tables import emit, param_column
from kernels.kernel import Kernel, max_threads, padded_scratch
from kernels.scalar import has_nan, reduce_means, swing_height, wrap_2pi
from kernels.tasks.g1_walk import constants as task
from kernels.tasks.g1_walk import plan as plan_lib
from kernels.tasks.g1_walk.constants import (
    J_L_HIP_ROLL,
    J_L_HIP_YAW,
    J_L_KNEE,
    J_R_HIP_ROLL,
    J_R_HIP_YAW,
    J_R_KNEE,
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
    S_GLOBAL_LINVEL_TORSO,
    S_GYRO_PELVIS,
    S_HAND_THIGH_L,
    S_HAND_THIGH_R,
    S_LOCAL_LINVEL_PELVIS,
    S_ORIENTATION_PELVIS,
    S_UPVECTOR_TORSO,
)

LIBRARY = {kind: dict(terms) for kind, terms in plan_lib.LIBRARY.items()}
del LIBRARY["reward"]["dof_acc"]  # reads qacc, which the snapshot has not: no plan can use it
REWARDS = tuple(LIBRARY["reward"])
TERMINATIONS = tuple(LIBRARY["termination"])
OBSERVATIONS = tuple(LIBRARY["observation"])
INPUTS = tuple(spec.name for spec in task.CONTRACT.inputs)
NJ = task.NUM_JOINTS

# Reward indices as module constants, so the kernel reads like the library.
(
    TRACK_LIN,
    TRACK_ANG,
    ANG_XY,
    ORIENT,
    SLIP,
    AIR,
    PHASE,
    TERM,
    STILL,
    COLL,
    FORCE,
    HIP,
    KNEE,
    LIMITS,
    POSE,
    LIN_Z,
    HEIGHT,
    TORQUES,
    RATE,
    ENERGY,
    ALIVE,
) = range(len(REWARDS))
assert REWARDS[ALIVE] == "alive" and REWARDS[POSE] == "pose"
(
    O_LINVEL,
    O_GYRO,
    O_GRAVITY,
    O_COMMAND,
    O_JOINT_POS,
    O_JOINT_VEL,
    O_LAST_ACT,
    O_PHASE,
    O_ACCEL,
    O_ANGVEL,
    O_HEIGHT,
    O_FORCE,
    O_CONTACT,
    O_FEET_LINVEL,
    O_AIR,
) = range(len(OBSERVATIONS))
assert OBSERVATIONS[O_AIR] == "feet_air_time"
T_UPSIDE_DOWN, T_FEET_CONTACT, T_FOOT_SHIN, T_NAN = range(len(TERMINATIONS))
assert TERMINATIONS[T_NAN] == "nan_state"

# Parameter columns, by name (kernels.assembled.generic_tables.param_column).
TRACK_SIGMA = param_column(plan_lib.Tracking, "sigma")
ORI_X, ORI_Y, ORI_Z = (param_column(plan_lib.Orientation, f"target_{axis}") for axis in "xyz")
AIR_MIN = param_column(plan_lib.AirTime, "threshold_min")
AIR_CLIP = param_column(plan_lib.AirTime, "clip")
PHASE_HEIGHT = param_column(plan_lib.FeetPhase, "swing_height")
PHASE_SIGMA = param_column(plan_lib.FeetPhase, "sigma")
PHASE_MASK_SPEED = param_column(plan_lib.FeetPhase, "mask_speed")
PHASE_MASK_COMMAND = param_column(plan_lib.FeetPhase, "mask_command")
STILL_THRESHOLD = param_column(plan_lib.StandStill, "command_threshold")
FORCE_MAX = param_column(plan_lib.ContactForce, "max_force")
HIP_SIDESTEP = param_column(plan_lib.HipDeviation, "sidestep_vy")
HEIGHT_TARGET = param_column(plan_lib.BaseHeight, "target")


@njit(parallel=True, cache=True)
def generic_kernel(inputs, state, outs, reward, done, term_means, tables, workspace, scratch, level, dt):
    qpos, qvel, sd, actuator_force, feet_pos, actions, last_actions, commands, phase_dt, noise_u = inputs
    phase, air_time, last_contact, peak = state
    (
        weights,
        active,
        slot,
        params,
        term_active,
        route_term,
        route_column,
        route_noise,
        noise_column,
        q0,
        soft_lo,
        soft_hi,
    ) = tables
    n = qpos.shape[0]
    scratch[:, :] = 0.0
    for i in prange(n):
        tid = numba.get_thread_id()
        acc = scratch[tid]
        dq = workspace[i]
        for j in range(NJ):
            dq[j] = qpos[i, QPOS_JOINTS + j] - q0[j]

        c0 = sd[i, S_FOOT_FLOOR_L] > 0.0
        c1 = sd[i, S_FOOT_FLOOR_R] > 0.0
        air0 = air_time[i, 0] + dt
        air1 = air_time[i, 1] + dt
        first0 = air_time[i, 0] > 0.0 and (c0 or last_contact[i, 0] != 0)
        first1 = air_time[i, 1] > 0.0 and (c1 or last_contact[i, 1] != 0)
        z0 = feet_pos[i, 0, 2]
        z1 = feet_pos[i, 1, 2]
        cx = commands[i, 0]
        cy = commands[i, 1]
        cz = commands[i, 2]
        cmd_norm = math.sqrt(cx * cx + cy * cy + cz * cz)
        speed_xy = math.sqrt(
            sd[i, S_GLOBAL_LINVEL_PELVIS] * sd[i, S_GLOBAL_LINVEL_PELVIS]
            + sd[i, S_GLOBAL_LINVEL_PELVIS + 1] * sd[i, S_GLOBAL_LINVEL_PELVIS + 1]
        )
        qw, qx, qy, qz = (
            sd[i, S_ORIENTATION_PELVIS],
            sd[i, S_ORIENTATION_PELVIS + 1],
            sd[i, S_ORIENTATION_PELVIS + 2],
            sd[i, S_ORIENTATION_PELVIS + 3],
        )
        grav = (-2.0 * (qx * qz - qw * qy), -2.0 * (qy * qz + qw * qx), -(1.0 - 2.0 * (qx * qx + qy * qy)))

        is_done = False
        if term_active[T_UPSIDE_DOWN] and sd[i, S_UPVECTOR_TORSO + 2] < 0.0:
            is_done = True
        if term_active[T_FEET_CONTACT] and sd[i, S_FOOT_FOOT] > 0.0:
            is_done = True
        if term_active[T_FOOT_SHIN] and (sd[i, S_FOOT_SHIN_L] > 0.0 or sd[i, S_FOOT_SHIN_R] > 0.0):
            is_done = True
        if term_active[T_NAN] and (has_nan(qpos[i]) or has_nan(qvel[i])):
            is_done = True

        r = 0.0
        for k in range(len(weights)):
            if not active[k]:
                continue
            p = params[k]
            f = 0.0
            if k == TRACK_LIN:
                f = math.exp(
                    -((cx - sd[i, S_LOCAL_LINVEL_PELVIS]) ** 2 + (cy - sd[i, S_LOCAL_LINVEL_PELVIS + 1]) ** 2)
                    / p[TRACK_SIGMA]
                )
            elif k == TRACK_ANG:
                f = math.exp(-((cz - sd[i, S_GYRO_PELVIS + 2]) ** 2) / p[TRACK_SIGMA])
            elif k == ANG_XY:
                f = sd[i, S_GLOBAL_ANGVEL_TORSO] ** 2 + sd[i, S_GLOBAL_ANGVEL_TORSO + 1] ** 2
            elif k == ORIENT:
                f = (
                    (sd[i, S_UPVECTOR_TORSO] - p[ORI_X]) ** 2
                    + (sd[i, S_UPVECTOR_TORSO + 1] - p[ORI_Y]) ** 2
                    + (sd[i, S_UPVECTOR_TORSO + 2] - p[ORI_Z]) ** 2
                )
            elif k == SLIP:
                f = speed_xy * ((1.0 if c0 else 0.0) + (1.0 if c1 else 0.0))
            elif k == AIR:
                if first0:
                    f += min(air0 - p[AIR_MIN], p[AIR_CLIP])
                if first1:
                    f += min(air1 - p[AIR_MIN], p[AIR_CLIP])
            elif k == PHASE:
                if (
                    speed_xy > p[PHASE_MASK_SPEED]
                    or abs(sd[i, S_GLOBAL_ANGVEL_PELVIS + 2]) > p[PHASE_MASK_SPEED]
                    or cmd_norm > p[PHASE_MASK_COMMAND]
                ):
                    e0 = z0 - swing_height(phase[i, 0], p[PHASE_HEIGHT])
                    e1 = z1 - swing_height(phase[i, 1], p[PHASE_HEIGHT])
                    f = math.exp(-(e0 * e0 + e1 * e1) / p[PHASE_SIGMA])
            elif k == TERM:
                f = 1.0 if is_done else 0.0
            elif k == STILL:
                if cmd_norm < p[STILL_THRESHOLD]:
                    for j in range(NJ):
                        f += abs(dq[j])
            elif k == COLL:
                f = 1.0 if (sd[i, S_HAND_THIGH_L] > 0.0 or sd[i, S_HAND_THIGH_R] > 0.0) else 0.0
            elif k == FORCE:
                f = max(abs(sd[i, S_FOOT_FORCE_Z_L]) - p[FORCE_MAX], 0.0) + max(
                    abs(sd[i, S_FOOT_FORCE_Z_R]) - p[FORCE_MAX], 0.0
                )
            elif k == HIP:
                f = abs(dq[J_L_HIP_YAW]) + abs(dq[J_R_HIP_YAW])
                if not cy > p[HIP_SIDESTEP]:
                    f += abs(dq[J_L_HIP_ROLL]) + abs(dq[J_R_HIP_ROLL])
            elif k == KNEE:
                f = abs(dq[J_L_KNEE]) + abs(dq[J_R_KNEE])
            elif k == LIMITS:
                for j in range(NJ):
                    q = qpos[i, QPOS_JOINTS + j]
                    f += max(soft_lo[j] - q, 0.0) + max(q - soft_hi[j], 0.0)
            elif k == POSE:
                for j in range(NJ):
                    f += dq[j] * dq[j]
            elif k == LIN_Z:
                f = sd[i, S_GLOBAL_LINVEL_PELVIS + 2] ** 2 + sd[i, S_GLOBAL_LINVEL_TORSO + 2] ** 2
            elif k == HEIGHT:
                f = (qpos[i, QPOS_BASE_Z] - p[HEIGHT_TARGET]) ** 2
            elif k == TORQUES:
                for j in range(NJ):
                    f += abs(actuator_force[i, j])
            elif k == RATE:
                for j in range(NJ):
                    f += (actions[i, j] - last_actions[i, j]) ** 2
            elif k == ENERGY:
                for j in range(NJ):
                    f += abs(qvel[i, QVEL_JOINTS + j]) * abs(actuator_force[i, j])
            elif k == ALIVE:
                f = 1.0
            r += weights[k] * f
            acc[slot[k]] += f
        reward[i] = dt * r
        done[i] = 1 if is_done else 0

        for row in range(route_term.shape[0]):
            o = route_term[row]
            cols = route_column[row]
            nc = noise_column[row]
            ns = route_noise[row]
            if o == O_LINVEL:
                for k in range(3):
                    emit(outs, cols, k, sd[i, S_LOCAL_LINVEL_PELVIS + k], noise_u, i, nc, ns, level)
            elif o == O_GYRO:
                for k in range(3):
                    emit(outs, cols, k, sd[i, S_GYRO_PELVIS + k], noise_u, i, nc, ns, level)
            elif o == O_GRAVITY:
                for k in range(3):
                    emit(outs, cols, k, grav[k], noise_u, i, nc, ns, level)
            elif o == O_COMMAND:
                for k in range(3):
                    emit(outs, cols, k, commands[i, k], noise_u, i, nc, ns, level)
            elif o == O_JOINT_POS:
                for k in range(NJ):
                    emit(outs, cols, k, dq[k], noise_u, i, nc, ns, level)
            elif o == O_JOINT_VEL:
                for k in range(NJ):
                    emit(outs, cols, k, qvel[i, QVEL_JOINTS + k], noise_u, i, nc, ns, level)
            elif o == O_LAST_ACT:
                for k in range(NJ):
                    emit(outs, cols, k, last_actions[i, k], noise_u, i, nc, ns, level)
            elif o == O_PHASE:
                for k in range(2):
                    emit(outs, cols, k, math.cos(phase[i, k]), noise_u, i, nc, ns, level)
                    emit(outs, cols, 2 + k, math.sin(phase[i, k]), noise_u, i, nc, ns, level)
            elif o == O_ACCEL:
                for k in range(3):
                    emit(outs, cols, k, sd[i, S_ACCEL_PELVIS + k], noise_u, i, nc, ns, level)
            elif o == O_ANGVEL:
                for k in range(3):
                    emit(outs, cols, k, sd[i, S_GLOBAL_ANGVEL_PELVIS + k], noise_u, i, nc, ns, level)
            elif o == O_HEIGHT:
                emit(outs, cols, 0, qpos[i, QPOS_BASE_Z], noise_u, i, nc, ns, level)
            elif o == O_FORCE:
                for k in range(NJ):
                    emit(outs, cols, k, actuator_force[i, k], noise_u, i, nc, ns, level)
            elif o == O_CONTACT:
                emit(outs, cols, 0, 1.0 if c0 else 0.0, noise_u, i, nc, ns, level)
                emit(outs, cols, 1, 1.0 if c1 else 0.0, noise_u, i, nc, ns, level)
            elif o == O_FEET_LINVEL:
                for k in range(6):
                    emit(outs, cols, k, sd[i, S_FOOT_LINVEL + k], noise_u, i, nc, ns, level)
            elif o == O_AIR:
                emit(outs, cols, 0, air0, noise_u, i, nc, ns, level)
                emit(outs, cols, 1, air1, noise_u, i, nc, ns, level)

        # Bookkeeping 5 and the phase advance (spec A4).
        air_time[i, 0] = 0.0 if c0 else air0
        air_time[i, 1] = 0.0 if c1 else air1
        peak[i, 0] = 0.0 if c0 else max(peak[i, 0], z0)
        peak[i, 1] = 0.0 if c1 else max(peak[i, 1], z1)
        last_contact[i, 0] = 1 if c0 else 0
        last_contact[i, 1] = 1 if c1 else 0
        for k in range(2):
            phase[i, k] = wrap_2pi(phase[i, k] + phase_dt[i] + math.pi) - math.pi

    reduce_means(scratch, term_means, n)


class GenericWalk(Kernel):
    """The plan becomes tables; the compiled kernel never changes."""

    parallel = True

    def __init__(self, **kwargs):
        super().__init__(task.CONTRACT, **kwargs)
        plan = self.plan
        routes = tables.observations(plan, LIBRARY["observation"])
        self._tables = (
            *tables.rewards(plan, LIBRARY["reward"]),
            tables.terminations(plan, LIBRARY["termination"])[0],  # active; they take no parameters
            routes.term,
            routes.column,
            routes.noise,
            routes.noise_column,
            task.DEFAULT_POSE.copy(),
            task.SOFT_LOWER.copy(),
            task.SOFT_UPPER.copy(),
        )
        self._workspace = np.empty((self.num_envs, NJ))
        self._scratch = padded_scratch(max_threads(), max(1, len(plan.rewards)))
        self._spare = np.empty((self.num_envs, 0), dtype=np.float32)

    def _run(self, snap: Mapping[str, np.ndarray], out: dict[str, np.ndarray]) -> None:
        generic_kernel(
            tuple(snap[name] for name in INPUTS),
            (snap["phase"], snap["feet_air_time"], snap["last_contact"], snap["feet_peak_height"]),
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
