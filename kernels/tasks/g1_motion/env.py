"""g1_motion as a batch environment: BeyondMimic-style tracking of the generated reference clip (spec B).

Per step (spec B7): ctrl = q_default + s a, 4 substeps, then the velocity stage at the new state (positions,
velocities and sensors current, as mjlab reads them), the snapshot, ``update_state`` (terminations and rewards at
frame t, then p~/q~ and observations at t' = min(t+1, T-1)), then the env's bookkeeping: the episode counter, a
time-out at 500 steps, the frame counter t += 1, the adaptive-sampling failure EMA (``fail_ema``, updated in
place from the per-bin failure counts), and an interval push, all in one compiled loop.
Envs that terminated or timed out are reset by reference-state initialisation (RSI) from a frame drawn by adaptive
sampling (spec B7): root pose and twist from the clip plus uniform noise, joints from the clip plus U(+-0.1)
clipped to the soft limits, joint velocities from the clip. An env that runs off the clip's end is resampled the
same way but its episode goes on (its step counter is kept), as mjlab's command does. Unlike mjlab, which
resamples within the step, that RSI happens at the start of the next step (the next-step reset of
``kernels.sim.env``), so such an env skips one physics step.
Startup domain randomisation (spec B7) is off.
"""

from __future__ import annotations

import mujoco
import numpy as np

from kernels.sim.env import TaskEnv
from kernels.tasks.g1_motion import bookkeeping, getters, resets
from kernels.tasks.g1_motion import clip as motion_clip
from kernels.tasks.g1_motion import constants as task
from kernels.tasks.g1_motion.model import motion_model

EPISODE_STEPS = 500
BIN_FRAMES = 50
FAILURE_ALPHA = 0.001
UNIFORM_RATIO = 0.1
POSE_NOISE = np.array([0.05, 0.05, 0.01])  # root xyz
ROT_NOISE = np.array([0.1, 0.1, 0.2])  # roll, pitch, yaw
TWIST_NOISE = np.array([0.5, 0.5, 0.2, 0.52, 0.52, 0.78])  # vx vy vz, wx wy wz (world)
JOINT_NOISE = 0.1
PUSH_INTERVAL_S = (1.0, 3.0)
ROOT_KEYS = ("body_pos_w", "body_quat_w", "body_lin_vel_w", "body_ang_vel_w")


class MotionEnv(TaskEnv):
    contract = task.CONTRACT
    stage = forward_stage = mujoco.mjtStage.mjSTAGE_VEL
    outputs = ("xpos", "xquat", "cvel", "subtree_com")
    physical = (
        "body_pos_w",
        "body_quat_w",
        "body_lin_vel_w",
        "body_ang_vel_w",
        "joint_pos",
        "joint_vel",
        "noise_u",
    )

    def __init__(self, num_envs: int, threads: int, seed: int, clip: dict[str, np.ndarray] | None = None):
        self.clip = motion_clip.load() if clip is None else clip
        self.frames = len(self.clip["joint_pos"])
        super().__init__(motion_model(), num_envs, threads, seed, frames=self.frames)
        self.snap.update(motion_clip.tracked_library(self.clip))
        # every frame's pelvis, for the resets
        self.root = {name: np.ascontiguousarray(self.clip[name][:, 0]) for name in ROOT_KEYS}
        m = self.tm.model
        self.bodies = np.array([m.body(name).id for name in task.BODIES], dtype=np.int64)
        self.roots = m.body_rootid[self.bodies].astype(np.int64)
        self.bins = self.frames // BIN_FRAMES + 1
        self.fail_ema = np.zeros(self.bins)
        self.episode_steps = np.zeros(num_envs, np.int64)
        self.push_countdown = np.zeros(num_envs, np.int64)
        self.push_interval_steps = np.array(PUSH_INTERVAL_S) / task.DT
        self.failed = np.zeros(self.bins, np.int64)
        self.resample = np.zeros(num_envs, np.bool_)  # rows that ran off the clip: RSI, the episode goes on

    def _get(self, out: dict[str, np.ndarray]) -> None:
        s = self.sim
        getters.motion_rows(
            self.seed,
            self.key_calls,
            s["xpos"],
            s["xquat"],
            s["cvel"],
            s["subtree_com"],
            self.bodies,
            self.roots,
            s.qpos,
            s.qvel,
            out["body_pos_w"],
            out["body_quat_w"],
            out["body_lin_vel_w"],
            out["body_ang_vel_w"],
            out["joint_pos"],
            out["joint_vel"],
            out["noise_u"],
        )

    def _advance(self, out: dict[str, np.ndarray]) -> None:
        snap = self.snap
        bookkeeping.motion_advance(
            self.seed,
            self.key_calls,
            out["done"],
            self.just_reset,
            self.episode_steps,
            snap["time_steps"],
            self.frames,
            EPISODE_STEPS,
            self.failed,
            self.fail_ema,
            FAILURE_ALPHA,
            self.push_countdown,
            self.push_interval_steps,
            TWIST_NOISE,
            self.sim.qpos,
            self.sim.qvel,
            self.reset_mask,
            self.resample,
        )

    def begin_reset(self, rows: np.ndarray) -> None:
        sim, snap, clip, root = self.sim, self.snap, self.clip, self.root
        resets.motion_reset(
            rows,
            self.seed,
            self.key_calls,
            self.fail_ema,  # adaptive sampling (spec B7)
            UNIFORM_RATIO,
            self.frames,
            root["body_pos_w"],
            root["body_quat_w"],
            root["body_lin_vel_w"],
            root["body_ang_vel_w"],
            clip["joint_pos"],
            clip["joint_vel"],
            POSE_NOISE,
            ROT_NOISE,
            TWIST_NOISE,
            JOINT_NOISE,
            task.SOFT_LOWER,
            task.SOFT_UPPER,
            self.tm.default_pose,
            self.push_interval_steps,
            self.resample,  # rows that only ran off the clip keep their episode counter
            sim.qpos,
            sim.qvel,
            sim.ctrl,
            sim["time"],
            sim["qacc_warmstart"],
            snap["time_steps"],
            snap["actions"],
            snap["last_actions"],
            self.episode_steps,
            self.push_countdown,
        )
