"""g1_walk as a batch environment: MuJoCo Playground's G1 joystick task on the flat feet-only scene (spec A).

Per step: ctrl = q0 + 0.5 a (MuJoCo clamps it to ctrlrange), a push every 5-10 s, 10 substeps (derived fields
describe the state before the last substep, as ``mjx.step`` leaves them), the snapshot, ``update_state`` (which
advances phase and foot bookkeeping), then the env's bookkeeping: the command resample when the per-env counter
passes 500, a time-out after 1000 steps (the brax EpisodeWrapper's truncation), and the step's actions becoming
``last_actions`` (the two buffers trade places).
Reset (spec A1): knees_bent, xy +- 0.5, random heading, joints scaled by U(0.5, 1.5), base twist U(+-0.5),
ctrl = joint q, then mj_forward; phase [0, pi] with a gait frequency U(1.25, 1.5), a fresh command, bookkeeping 0.
Domain randomisation (optional in spec A1) is off.
"""

from __future__ import annotations

import numpy as np

from kernels.sim.env import TaskEnv
from kernels.tasks.g1_walk import bookkeeping, getters, resets
from kernels.tasks.g1_walk import constants as task
from kernels.tasks.g1_walk.model import walk_model

EPISODE_STEPS = 1000
COMMAND_RESAMPLE_STEPS = 500
COMMAND_RANGE = np.array([1.0, 0.5, 1.0])  # vx, vy, wz ~ U(-range, range)
ZERO_COMMAND_PROB = 0.1
GAIT_FREQ = (1.25, 1.5)
PUSH_INTERVAL_S = (5.0, 10.0)
PUSH_MAGNITUDE = np.array([0.1, 2.0])


class WalkEnv(TaskEnv):
    contract = task.CONTRACT
    outputs = ("sensordata", "actuator_force", "site_xpos")
    physical = ("qpos", "qvel", "sensordata", "actuator_force", "feet_pos", "noise_u")

    def __init__(self, num_envs: int, threads: int, seed: int):
        super().__init__(walk_model(), num_envs, threads, seed)
        m = self.tm.model
        self.feet_sites = np.array([m.site("left_foot").id, m.site("right_foot").id], dtype=np.int64)
        self.key_qpos = m.key_qpos[self.tm.keyframe].copy()
        self.command_steps = np.zeros(num_envs, np.int64)
        self.episode_steps = np.zeros(num_envs, np.int64)
        self.push_steps = np.zeros(num_envs, np.int64)
        self.push_interval = np.ones(num_envs, np.int64)
        self.gait_freq = np.array(GAIT_FREQ)
        self.push_interval_steps = np.array(PUSH_INTERVAL_S) / task.DT

    def push(self) -> None:
        bookkeeping.walk_push(
            self.seed, self.key_calls, self.push_steps, self.push_interval, PUSH_MAGNITUDE, self.sim.qvel
        )

    def _get(self, out: dict[str, np.ndarray]) -> None:
        s = self.sim
        getters.walk_rows(
            self.seed,
            self.key_calls,
            s.qpos,
            s.qvel,
            s["sensordata"],
            s["actuator_force"],
            s["site_xpos"],
            self.feet_sites,
            out["qpos"],
            out["qvel"],
            out["sensordata"],
            out["actuator_force"],
            out["feet_pos"],
            out["noise_u"],
        )

    def _advance(self, out: dict[str, np.ndarray]) -> None:
        snap = self.snap
        bookkeeping.walk_advance(
            self.seed,
            self.key_calls,
            out["done"],
            self.just_reset,
            self.episode_steps,
            self.command_steps,
            snap["commands"],
            COMMAND_RANGE,
            ZERO_COMMAND_PROB,
            COMMAND_RESAMPLE_STEPS,
            EPISODE_STEPS,
            snap["phase"],
            snap["feet_air_time"],
            snap["last_contact"],
            snap["feet_peak_height"],
            self.reset_mask,
        )

    def begin_reset(self, rows: np.ndarray) -> None:
        sim, snap = self.sim, self.snap
        resets.walk_reset(
            rows,
            self.seed,
            self.key_calls,
            self.key_qpos,
            COMMAND_RANGE,
            ZERO_COMMAND_PROB,
            self.gait_freq,
            self.push_interval_steps,
            task.DT,
            sim.qpos,
            sim.qvel,
            sim.ctrl,
            sim["time"],
            sim["qacc_warmstart"],
            snap["commands"],
            snap["phase"],
            snap["phase_dt"],
            snap["feet_air_time"],
            snap["last_contact"],
            snap["feet_peak_height"],
            snap["actions"],
            snap["last_actions"],
            self.command_steps,
            self.episode_steps,
            self.push_steps,
            self.push_interval,
        )
