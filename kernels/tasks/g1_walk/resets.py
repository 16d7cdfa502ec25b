"""New g1_walk episodes for the reset rows, one compiled loop (spec A1); ``kernels.sim.resets`` says how a reset
draws its random numbers.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from kernels.geometry import quat_from_euler_scalar, quat_mul
from kernels.sim.getters import RESETS, next_key, uniform_in
from kernels.sim.resets import DRAWS, clear


@njit(cache=True)
def walk_reset(
    rows,
    seed,
    key_calls,
    key_qpos,
    command_range,
    zero_command_prob,
    gait_freq,
    push_interval_steps,
    ctrl_dt,
    qpos,
    qvel,
    ctrl,
    time,
    warmstart,
    commands,
    phase,
    phase_dt,
    feet_air_time,
    last_contact,
    feet_peak_height,
    actions,
    last_actions,
    command_steps,
    episode_steps,
    push_steps,
    push_interval,
):
    key = next_key(seed, key_calls, RESETS)
    nj = qpos.shape[1] - 7
    for i in range(rows.shape[0]):
        r = rows[i]
        for j in range(qpos.shape[1]):
            qpos[r, j] = key_qpos[j]
        qpos[r, 0] += uniform_in(key, r * DRAWS, -0.5, 0.5)
        qpos[r, 1] += uniform_in(key, r * DRAWS + 1, -0.5, 0.5)
        heading = quat_from_euler_scalar(0.0, 0.0, uniform_in(key, r * DRAWS + 2, -3.14, 3.14))
        q = quat_mul((qpos[r, 3], qpos[r, 4], qpos[r, 5], qpos[r, 6]), heading)
        for c in range(4):
            qpos[r, 3 + c] = q[c]
        for j in range(nj):
            qpos[r, 7 + j] *= uniform_in(key, r * DRAWS + (3 + j), 0.5, 1.5)
            ctrl[r, j] = qpos[r, 7 + j]
        for j in range(qvel.shape[1]):
            qvel[r, j] = uniform_in(key, r * DRAWS + (3 + nj + j), -0.5, 0.5) if j < 6 else 0.0
        clear(r, time, warmstart)
        k = 9 + nj  # draws 0 .. 8 + nj are taken above
        zero = uniform_in(key, r * DRAWS + k, 0.0, 1.0) < zero_command_prob
        for c in range(3):
            commands[r, c] = (
                0.0 if zero else uniform_in(key, r * DRAWS + (k + 1 + c), -command_range[c], command_range[c])
            )
        phase[r, 0], phase[r, 1] = 0.0, np.pi
        phase_dt[r] = 2 * np.pi * ctrl_dt * uniform_in(key, r * DRAWS + (k + 4), gait_freq[0], gait_freq[1])
        push_interval[r] = round(
            uniform_in(key, r * DRAWS + (k + 5), push_interval_steps[0], push_interval_steps[1])
        )
        for f in range(2):
            feet_air_time[r, f] = 0.0
            last_contact[r, f] = 0
            feet_peak_height[r, f] = 0.0
        for j in range(nj):
            actions[r, j] = 0.0
            last_actions[r, j] = 0.0
        command_steps[r] = episode_steps[r] = push_steps[r] = 0
