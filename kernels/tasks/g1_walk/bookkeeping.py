"""The g1_walk env's per-step bookkeeping as compiled loops (spec A1): the push before physics; counters, command
resampling and the reset mask after ``update_state``. ``kernels.sim.bookkeeping`` says how they draw their random
numbers.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from kernels.sim.bookkeeping import DRAWS
from kernels.sim.getters import BOOKKEEPING, next_key, uniform_in


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
