"""One compiled g1_walk kernel for any plan (implementation ``assembled_generic``): the generic-runtime design.

This is the design a first plan-driven effort used, kept as a named implementation so the gate can show that it
catches its cost. It is written the way a careful engineer would write a generic runtime, not slowed on
purpose: one kernel, compiled once, serves every plan because everything plan-specific is data read at run time:

- inputs, state and outputs are passed as tuples;
- every library term sits behind a runtime switch (``if active[k]``), with its weight and parameters read from
  arrays, and its log slot looked up in a table;
- joint-position differences go through an intermediate per-env workspace (written once, read by every term that
  needs them);
- observation blocks are routed to their output columns through a table, noise scales read from an array.

What it cannot have, and what ``assembled`` has: constant propagation of weights, parameters and offsets, dead
code elimination of inactive terms, and no intermediate write-back.
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
from kernels.tasks import g1_walk_plan as plan_lib

REWARDS = tuple(name for name in plan_lib.LIBRARY["reward"] if name != "dof_acc")
TERMINATIONS = tuple(plan_lib.LIBRARY["termination"])
OBSERVATIONS = tuple(plan_lib.LIBRARY["observation"])
R = {name: k for k, name in enumerate(REWARDS)}
O = {name: k for k, name in enumerate(OBSERVATIONS)}
MAX_PARAMS = 4
INPUTS = tuple(spec.name for spec in task.CONTRACT.inputs)
MAX_GROUPS = 2
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


@njit(inline="always")
def _emit(outs, columns, k, value, noise_u, i, noise_col, scale, level):
    """Write column k of one observation block to every group it is routed to (``columns[g]`` >= 0), noisy."""
    if scale != 0.0:
        value += level * (2.0 * noise_u[i, noise_col + k] - 1.0) * scale
    for g in range(MAX_GROUPS):
        if columns[g] >= 0:
            outs[g][i, columns[g] + k] = value


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
        blocks,
        routes,
        noise_cols,
        noise_scales,
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
            dq[j] = qpos[i, 7 + j] - q0[j]

        c0 = sd[i, 68] > 0.0
        c1 = sd[i, 69] > 0.0
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
        speed_xy = math.sqrt(sd[i, 41] * sd[i, 41] + sd[i, 42] * sd[i, 42])
        qw, qx, qy, qz = sd[i, 34], sd[i, 35], sd[i, 36], sd[i, 37]
        grav = (-2.0 * (qx * qz - qw * qy), -2.0 * (qy * qz + qw * qx), -(1.0 - 2.0 * (qx * qx + qy * qy)))

        is_done = False
        if term_active[0] and sd[i, 2] < 0.0:
            is_done = True
        if term_active[1] and sd[i, 70] > 0.0:
            is_done = True
        if term_active[2] and (sd[i, 71] > 0.0 or sd[i, 72] > 0.0):
            is_done = True
        if term_active[3] and (has_nan(qpos[i]) or has_nan(qvel[i])):
            is_done = True

        r = 0.0
        for k in range(len(weights)):
            if not active[k]:
                continue
            p = params[k]
            f = 0.0
            if k == TRACK_LIN:
                f = math.exp(-((cx - sd[i, 6]) ** 2 + (cy - sd[i, 7]) ** 2) / p[0])
            elif k == TRACK_ANG:
                f = math.exp(-((cz - sd[i, 20]) ** 2) / p[0])
            elif k == ANG_XY:
                f = sd[i, 44] ** 2 + sd[i, 45] ** 2
            elif k == ORIENT:
                f = (sd[i, 0] - p[0]) ** 2 + (sd[i, 1] - p[1]) ** 2 + (sd[i, 2] - p[2]) ** 2
            elif k == SLIP:
                f = speed_xy * ((1.0 if c0 else 0.0) + (1.0 if c1 else 0.0))
            elif k == AIR:
                if first0:
                    f += min(air0 - p[0], p[1])
                if first1:
                    f += min(air1 - p[0], p[1])
            elif k == PHASE:
                if speed_xy > p[2] or abs(sd[i, 49]) > p[2] or cmd_norm > p[3]:
                    e0 = z0 - swing_height(phase[i, 0], p[0])
                    e1 = z1 - swing_height(phase[i, 1], p[0])
                    f = math.exp(-(e0 * e0 + e1 * e1) / p[1])
            elif k == TERM:
                f = 1.0 if is_done else 0.0
            elif k == STILL:
                if cmd_norm < p[0]:
                    for j in range(NJ):
                        f += abs(dq[j])
            elif k == COLL:
                f = 1.0 if (sd[i, 73] > 0.0 or sd[i, 74] > 0.0) else 0.0
            elif k == FORCE:
                f = max(abs(sd[i, 64]) - p[0], 0.0) + max(abs(sd[i, 67]) - p[0], 0.0)
            elif k == HIP:
                f = abs(dq[2]) + abs(dq[8])
                if not cy > p[0]:
                    f += abs(dq[1]) + abs(dq[7])
            elif k == KNEE:
                f = abs(dq[3]) + abs(dq[9])
            elif k == LIMITS:
                for j in range(NJ):
                    q = qpos[i, 7 + j]
                    f += max(soft_lo[j] - q, 0.0) + max(q - soft_hi[j], 0.0)
            elif k == POSE:
                for j in range(NJ):
                    f += dq[j] * dq[j]
            elif k == LIN_Z:
                f = sd[i, 43] ** 2 + sd[i, 40] ** 2
            elif k == HEIGHT:
                f = (qpos[i, 2] - p[0]) ** 2
            elif k == TORQUES:
                for j in range(NJ):
                    f += abs(actuator_force[i, j])
            elif k == RATE:
                for j in range(NJ):
                    f += (actions[i, j] - last_actions[i, j]) ** 2
            elif k == ENERGY:
                for j in range(NJ):
                    f += abs(qvel[i, 6 + j]) * abs(actuator_force[i, j])
            elif k == ALIVE:
                f = 1.0
            r += weights[k] * f
            acc[slot[k]] += f
        reward[i] = dt * r
        done[i] = 1 if is_done else 0

        for b in range(blocks.shape[0]):
            o = blocks[b]
            cols = routes[b]
            nc = noise_cols[b]
            ns = noise_scales[b]
            if o == O_LINVEL:
                for k in range(3):
                    _emit(outs, cols, k, sd[i, 6 + k], noise_u, i, nc, ns, level)
            elif o == O_GYRO:
                for k in range(3):
                    _emit(outs, cols, k, sd[i, 18 + k], noise_u, i, nc, ns, level)
            elif o == O_GRAVITY:
                for k in range(3):
                    _emit(outs, cols, k, grav[k], noise_u, i, nc, ns, level)
            elif o == O_COMMAND:
                for k in range(3):
                    _emit(outs, cols, k, commands[i, k], noise_u, i, nc, ns, level)
            elif o == O_JOINT_POS:
                for k in range(NJ):
                    _emit(outs, cols, k, dq[k], noise_u, i, nc, ns, level)
            elif o == O_JOINT_VEL:
                for k in range(NJ):
                    _emit(outs, cols, k, qvel[i, 6 + k], noise_u, i, nc, ns, level)
            elif o == O_LAST_ACT:
                for k in range(NJ):
                    _emit(outs, cols, k, last_actions[i, k], noise_u, i, nc, ns, level)
            elif o == O_PHASE:
                for k in range(2):
                    _emit(outs, cols, k, math.cos(phase[i, k]), noise_u, i, nc, ns, level)
                    _emit(outs, cols, 2 + k, math.sin(phase[i, k]), noise_u, i, nc, ns, level)
            elif o == O_ACCEL:
                for k in range(3):
                    _emit(outs, cols, k, sd[i, 12 + k], noise_u, i, nc, ns, level)
            elif o == O_ANGVEL:
                for k in range(3):
                    _emit(outs, cols, k, sd[i, 47 + k], noise_u, i, nc, ns, level)
            elif o == O_HEIGHT:
                _emit(outs, cols, 0, qpos[i, 2], noise_u, i, nc, ns, level)
            elif o == O_FORCE:
                for k in range(NJ):
                    _emit(outs, cols, k, actuator_force[i, k], noise_u, i, nc, ns, level)
            elif o == O_CONTACT:
                _emit(outs, cols, 0, 1.0 if c0 else 0.0, noise_u, i, nc, ns, level)
                _emit(outs, cols, 1, 1.0 if c1 else 0.0, noise_u, i, nc, ns, level)
            elif o == O_FEET_LINVEL:
                for k in range(6):
                    _emit(outs, cols, k, sd[i, 50 + k], noise_u, i, nc, ns, level)
            elif o == O_AIR:
                _emit(outs, cols, 0, air0, noise_u, i, nc, ns, level)
                _emit(outs, cols, 1, air1, noise_u, i, nc, ns, level)

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


def _includes(plan, outer: str, inner: str) -> bool:
    """Whether group ``outer`` includes group ``inner``, directly or through other groups."""
    include = plan.group(outer).include
    while include is not None:
        if include == inner:
            return True
        include = plan.group(include).include
    return False


class GenericWalk(Kernel):
    """The plan becomes tables; the compiled kernel never changes."""

    impl = "assembled_generic"
    parallel = True

    def __init__(self, **kwargs):
        super().__init__(task.CONTRACT, **kwargs)
        plan = self.plan
        if len(plan.observations) > MAX_GROUPS:
            raise ValueError(
                f"assembled_generic routes at most {MAX_GROUPS} observation groups; this plan has "
                f"{len(plan.observations)} ({', '.join(g.name for g in plan.observations)})"
            )
        weights = np.zeros(len(REWARDS))
        active = np.zeros(len(REWARDS), dtype=np.bool_)
        slot = np.zeros(len(REWARDS), dtype=np.int64)
        params = np.zeros((len(REWARDS), MAX_PARAMS))
        if len({r.fn for r in plan.rewards}) != len(plan.rewards):
            raise ValueError("assembled_generic runs each library term at most once per plan")
        for s, term in enumerate(plan.rewards):
            k = R[term.fn]
            weights[k], active[k], slot[k] = term.weight, True, s
            values = [getattr(term.params, name) for name in vars(term.params)]
            params[k, : len(values)] = values
        term_active = np.array([any(t.fn == name for t in plan.terminations) for name in TERMINATIONS])
        # One routed block per observation term of a group; an included group's blocks are also written, at the
        # same columns, into every group that includes it.
        blocks, routes, noise_cols, noise_scales = [], [], [], []
        for group in plan.observations:
            own = plan.layout(group.name)[len(plan.layout(group.name)) - len(group.terms) :]
            for term, column in own:
                cols = [
                    column if other.name == group.name or _includes(plan, other.name, group.name) else -1
                    for other in plan.observations
                ]
                blocks.append(O[term.fn])
                routes.append(cols + [-1] * (MAX_GROUPS - len(cols)))
                noise_cols.append(plan.definition(term).noise_column or 0)
                noise_scales.append(term.noise)
        self._tables = (
            weights,
            active,
            slot,
            params,
            term_active,
            np.array(blocks, dtype=np.int64).reshape(-1),
            np.array(routes, dtype=np.int64).reshape(-1, MAX_GROUPS),
            np.array(noise_cols, dtype=np.int64).reshape(-1),
            np.array(noise_scales, dtype=np.float64).reshape(-1),
            task.DEFAULT_POSE.copy(),
            task.SOFT_LOWER.copy(),
            task.SOFT_UPPER.copy(),
        )
        self._workspace = np.empty((self.num_envs, NJ))
        self._scratch = padded_scratch(max_threads(), max(1, len(plan.rewards)))
        self._groups = tuple(g.name for g in plan.observations)
        self._spare = np.empty((self.num_envs, 0), dtype=np.float32)

    def _run(self, snap: Mapping[str, np.ndarray], out: dict[str, np.ndarray]) -> None:
        outs = tuple(out[g] for g in self._groups) + (self._spare,) * (MAX_GROUPS - len(self._groups))
        generic_kernel(
            tuple(snap[name] for name in INPUTS),
            (snap["phase"], snap["feet_air_time"], snap["last_contact"], snap["feet_peak_height"]),
            outs,
            out["reward"],
            out["done"],
            out["term_means"],
            self._tables,
            self._workspace,
            self._scratch,
            self.noise_level,
            self.plan.dt,
        )
