"""The env's per-step bookkeeping as compiled loops: ctrl from actions and pushes before physics, counters,
command resampling and the reset mask after ``update_state`` (spec A1 for g1_walk, B7 for g1_motion).

Random numbers come from the counter-based generator of ``getters`` (element r * DRAWS + k of the call's
stream), so the bookkeeping of a seed is the same on any thread count and for any implementation.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from kernels.geometry import quat_rotate_inv
from kernels.sim.getters import BOOKKEEPING, next_key, uniform_in

DRAWS = 8  # random numbers per env per call


@njit(cache=True)  # serial: waking the thread pool after the policy costs more than it saves
def write_ctrl(actions, scale, default_pose, ctrl):
    """ctrl = default_pose + scale * actions."""
    for i in range(actions.shape[0]):
        for j in range(actions.shape[1]):
            ctrl[i, j] = default_pose[j] + scale[j] * actions[i, j]


@njit(cache=True)
def walk_push(seed, key_calls, push_steps, push_interval, magnitude, qvel):
    """Spec A1: when (push_step + 1) mod interval == 0, m (cos t, sin t) is added to the base xy velocity."""
    key = next_key(seed, key_calls, BOOKKEEPING)
    for r in range(push_steps.shape[0]):
        push_steps[r] += 1
        if push_steps[r] % push_interval[r] == 0:
            theta = uniform_in(key, r * DRAWS, 0.0, 2 * np.pi)
            m = uniform_in(key, r * DRAWS + 1, magnitude[0], magnitude[1])
            qvel[r, 0] += m * math.cos(theta)
            qvel[r, 1] += m * math.sin(theta)


@njit(cache=True)
def walk_advance(
    seed,
    key_calls,
    done,
    just_reset,
    episode_steps,
    command_steps,
    commands,
    command_range,
    zero_command_prob,
    resample_after,
    episode_limit,
    phase,
    feet_air_time,
    last_contact,
    feet_peak_height,
    reset,
):
    """Counters, the command resample past ``resample_after`` steps; the reset mask.

    A row reset this step took its first observation from this step's kernel call, which also advanced its
    phase and foot bookkeeping: they go back to their reset values, so the next step sees what MuJoCo
    Playground's first step after a reset sees.
    """
    key = next_key(seed, key_calls, BOOKKEEPING)
    for r in range(done.shape[0]):
        if just_reset[r]:
            phase[r, 0], phase[r, 1] = 0.0, np.pi
            for f in range(2):
                feet_air_time[r, f] = 0.0
                last_contact[r, f] = 0
                feet_peak_height[r, f] = 0.0
            reset[r] = False
            continue
        episode_steps[r] += 1
        command_steps[r] += 1
        if command_steps[r] > resample_after:
            zero = uniform_in(key, r * DRAWS, 0.0, 1.0) < zero_command_prob
            for c in range(3):
                commands[r, c] = (
                    0.0 if zero else uniform_in(key, r * DRAWS + (1 + c), -command_range[c], command_range[c])
                )
            command_steps[r] = 0
        reset[r] = done[r] != 0 or episode_steps[r] >= episode_limit


@njit(cache=True)
def motion_advance(
    seed,
    key_calls,
    done,
    just_reset,
    episode_steps,
    time_steps,
    frames,
    episode_limit,
    failed,
    fail_ema,
    alpha,
    push_countdown,
    push_interval_steps,
    twist_noise,
    qpos,
    qvel,
    reset,
    resample,
):
    """The episode counter, failures per bin (before t advances) and their EMA (``fail_ema``, in place), t += 1,
    the interval push; the masks of the rows to reset next step (terminated or timed out) and of those among
    them that only ran off the clip's end (mjlab resamples those without ending the episode).

    The push adds U(+-twist_noise) to the root twist in the world frame (spec B7 step 8): the linear part to
    qvel[0:3], the angular part rotated into the body frame the free joint's qvel[3:6] is expressed in.

    A row reset this step took its observation at t + 1 from this step's kernel call (mjlab's command update
    after a reset): its t advances to that frame and nothing else is counted.
    """
    key = next_key(seed, key_calls, BOOKKEEPING)
    bins = failed.shape[0]
    failed[:] = 0
    for r in range(done.shape[0]):
        resample[r] = False
        if just_reset[r]:
            time_steps[r] = min(time_steps[r] + 1, frames - 1)
            reset[r] = False
            continue
        episode_steps[r] += 1
        if done[r]:
            failed[min(time_steps[r] * bins // frames, bins - 1)] += 1
        time_steps[r] += 1
        push_countdown[r] -= 1
        if push_countdown[r] <= 0:
            for c in range(3):
                qvel[r, c] += uniform_in(key, r * DRAWS + c, -twist_noise[c], twist_noise[c])
            w = (
                uniform_in(key, r * DRAWS + 3, -twist_noise[3], twist_noise[3]),
                uniform_in(key, r * DRAWS + 4, -twist_noise[4], twist_noise[4]),
                uniform_in(key, r * DRAWS + 5, -twist_noise[5], twist_noise[5]),
            )
            local = quat_rotate_inv((qpos[r, 3], qpos[r, 4], qpos[r, 5], qpos[r, 6]), w)
            for c in range(3):
                qvel[r, 3 + c] += local[c]
            push_countdown[r] = round(
                uniform_in(key, r * DRAWS + 6, push_interval_steps[0], push_interval_steps[1])
            )
        ended = done[r] != 0 or episode_steps[r] >= episode_limit
        resample[r] = not ended and time_steps[r] >= frames
        reset[r] = ended or resample[r]
    for b in range(bins):
        fail_ema[b] = alpha * failed[b] + (1 - alpha) * fail_ema[b]
