"""The generated reference motion: spec B8 layout, MuJoCo-consistent kinematics, cached on first use."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

from kernels.tasks.g1_motion import clip as motion_clip
from kernels.tasks.g1_motion import constants as task
from kernels.tasks.g1_motion import model as models


@pytest.fixture(scope="module")
def clip() -> dict[str, np.ndarray]:
    return motion_clip.load()


def test_layout_is_spec_b8(clip):
    m = models.motion_model().model
    frames, nb = motion_clip.FRAMES, m.nbody - 1
    assert int(clip["fps"][0]) == 50
    assert clip["joint_pos"].shape == clip["joint_vel"].shape == (frames, task.NUM_JOINTS)
    for key in ("body_pos_w", "body_lin_vel_w", "body_ang_vel_w"):
        assert clip[key].shape == (frames, nb, 3)
    assert clip["body_quat_w"].shape == (frames, nb, 4)
    np.testing.assert_allclose(np.linalg.norm(clip["body_quat_w"], axis=-1), 1.0, atol=1e-9)
    assert all(np.isfinite(v).all() for v in clip.values())


def test_joints_stay_inside_the_soft_limits_and_a_foot_stays_on_the_ground(clip):
    assert (clip["joint_pos"] >= task.SOFT_LOWER - 1e-12).all()
    assert (clip["joint_pos"] <= task.SOFT_UPPER + 1e-12).all()
    m = models.motion_model().model
    ankles = [m.body(f"{s}_ankle_roll_link").id - 1 for s in ("left", "right")]
    lowest = clip["body_pos_w"][:, ankles, 2].min(axis=1)
    np.testing.assert_allclose(lowest, lowest[0], atol=1e-9)  # the lower ankle keeps its standing height


def test_poses_are_mujoco_kinematics_of_the_joint_trajectory(clip):
    tm = models.motion_model()
    m, d = tm.model, mujoco.MjData(tm.model)
    for k in (0, 137, motion_clip.FRAMES - 1):
        d.qpos[:3] = clip["body_pos_w"][k, 0]
        d.qpos[3:7] = clip["body_quat_w"][k, 0]
        d.qpos[7:] = clip["joint_pos"][k]
        mujoco.mj_kinematics(m, d)
        np.testing.assert_allclose(d.xpos[1:], clip["body_pos_w"][k], atol=1e-9)


def test_body_velocities_match_finite_differences_of_the_poses(clip):
    dt = 1.0 / motion_clip.FPS
    central = (clip["body_pos_w"][2:] - clip["body_pos_w"][:-2]) / (2 * dt)
    lin = clip["body_lin_vel_w"][1:-1]
    # the clip is smooth: central differences of positions agree with MuJoCo's velocities to a few mm/s
    assert np.abs(central - lin).max() < 0.05
    assert np.abs(lin).max() > 0.3  # and it moves


def test_the_cache_is_reused_and_a_corrupt_file_is_regenerated(tmp_path):
    first = motion_clip.load(frames=20, directory=tmp_path)
    (path,) = tmp_path.glob("*.npz")
    stamp = path.stat().st_mtime_ns
    again = motion_clip.load(frames=20, directory=tmp_path)
    assert path.stat().st_mtime_ns == stamp
    np.testing.assert_array_equal(first["body_pos_w"], again["body_pos_w"])
    path.write_bytes(b"not an npz")
    regenerated = motion_clip.load(frames=20, directory=tmp_path)
    np.testing.assert_array_equal(first["joint_pos"], regenerated["joint_pos"])


def test_tracked_library_is_the_contract_arrays(clip):
    lib = motion_clip.tracked_library(clip)
    m = models.motion_model().model
    torso = m.body("torso_link").id - 1
    assert lib["motion_body_pos_w"].shape == (motion_clip.FRAMES, task.NUM_BODIES, 3)
    assert all(v.dtype == np.float32 and v.flags.c_contiguous for v in lib.values())
    np.testing.assert_allclose(
        lib["motion_body_pos_w"][:, task.ANCHOR], clip["body_pos_w"][:, torso], atol=1e-6
    )
