"""New g1_motion episodes for the reset rows: reference-state initialisation from adaptive sampling (spec B7), one
compiled loop; ``kernels.sim.resets`` says how a reset draws its random numbers.
"""

from __future__ import annotations

from numba import njit

from kernels.geometry import quat_from_euler_scalar, quat_mul, quat_rotate_inv
from kernels.sim.getters import RESETS, next_key, uniform_in
from kernels.sim.resets import DRAWS, clear


@njit(cache=True)
def motion_reset(
    rows,
    seed,
    key_calls,
    fail_ema,
    uniform_ratio,
    frames,
    root_pos,
    root_quat,
    root_lin_vel,
    root_ang_vel,
    clip_joint_pos,
    clip_joint_vel,
    pose_noise,
    rot_noise,
    twist_noise,
    joint_noise,
    soft_lower,
    soft_upper,
    default_pose,
    push_interval_steps,
    resample,
    qpos,
    qvel,
    ctrl,
    time,
    warmstart,
    time_steps,
    actions,
    last_actions,
    episode_steps,
    push_countdown,
):
    """RSI (spec B7) of ``rows``; a row in ``resample`` (it ran off the clip) keeps its episode counter."""
    key = next_key(seed, key_calls, RESETS)
    bins = fail_ema.shape[0]
    share = uniform_ratio / bins
    total = 0.0
    for b in range(bins):
        total += fail_ema[b] + share
    nj = clip_joint_pos.shape[1]
    for i in range(rows.shape[0]):
        r = rows[i]
        # adaptive sampling: a bin with probability (fail_ema + uniform_ratio / bins) / total, then a frame in it
        u = uniform_in(key, r * DRAWS, 0.0, 1.0) * total
        b = 0
        cdf = fail_ema[0] + share
        while b < bins - 1 and cdf <= u:
            b += 1
            cdf += fail_ema[b] + share
        t = min(int((b + uniform_in(key, r * DRAWS + 1, 0.0, 1.0)) / bins * (frames - 1)), frames - 1)
        time_steps[r] = t
        for c in range(3):
            qpos[r, c] = root_pos[t, c] + uniform_in(key, r * DRAWS + (2 + c), -pose_noise[c], pose_noise[c])
        tilt = quat_from_euler_scalar(
            uniform_in(key, r * DRAWS + 5, -rot_noise[0], rot_noise[0]),
            uniform_in(key, r * DRAWS + 6, -rot_noise[1], rot_noise[1]),
            uniform_in(key, r * DRAWS + 7, -rot_noise[2], rot_noise[2]),
        )
        q = quat_mul(tilt, (root_quat[t, 0], root_quat[t, 1], root_quat[t, 2], root_quat[t, 3]))
        for c in range(4):
            qpos[r, 3 + c] = q[c]
        for c in range(3):
            qvel[r, c] = root_lin_vel[t, c] + uniform_in(
                key, r * DRAWS + (8 + c), -twist_noise[c], twist_noise[c]
            )
        w = (
            root_ang_vel[t, 0] + uniform_in(key, r * DRAWS + 11, -twist_noise[3], twist_noise[3]),
            root_ang_vel[t, 1] + uniform_in(key, r * DRAWS + 12, -twist_noise[4], twist_noise[4]),
            root_ang_vel[t, 2] + uniform_in(key, r * DRAWS + 13, -twist_noise[5], twist_noise[5]),
        )
        local = quat_rotate_inv(q, w)  # the free joint's angular velocity is in the body frame
        for c in range(3):
            qvel[r, 3 + c] = local[c]
        for j in range(nj):
            target = clip_joint_pos[t, j] + uniform_in(key, r * DRAWS + (14 + j), -joint_noise, joint_noise)
            qpos[r, 7 + j] = min(max(target, soft_lower[j]), soft_upper[j])
            qvel[r, 6 + j] = clip_joint_vel[t, j]
            ctrl[r, j] = default_pose[j]
            actions[r, j] = 0.0
            last_actions[r, j] = 0.0
        clear(r, time, warmstart)
        if not resample[r]:
            episode_steps[r] = 0
        push_countdown[r] = round(
            uniform_in(key, r * DRAWS + (14 + nj), push_interval_steps[0], push_interval_steps[1])
        )
