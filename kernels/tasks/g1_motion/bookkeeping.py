"""The g1_motion env's per-step bookkeeping as one compiled loop (spec B7): counters, failures per bin and their
EMA, the frame counter, the interval push and the reset masks after ``update_state``. ``kernels.sim.bookkeeping``
says how it draws its random numbers.
"""

from __future__ import annotations

from numba import njit

from kernels.geometry import quat_rotate_inv
from kernels.sim.bookkeeping import DRAWS
from kernels.sim.getters import BOOKKEEPING, next_key, uniform_in


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
