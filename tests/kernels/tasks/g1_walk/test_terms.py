"""Hand-computed g1_walk values on tiny crafted snapshots (spec A3-A5), for every implementation."""

import math

import numpy as np
import pytest

import kernels
from kernels.tasks.g1_walk import constants as walk
from tests.kernels.snapshots import make_inputs

TERM = {name: k for k, name in enumerate(walk.TERMS)}


def crafted() -> dict[str, np.ndarray]:
    """One standing G1 at the default pose, upright, no contacts, zero command and velocities."""
    snap = make_inputs("g1_walk", 1, seed=0)
    for name in ("qvel", "sensordata", "actuator_force", "actions", "last_actions", "commands"):
        snap[name][...] = 0
    snap["qpos"][0, :7] = [0, 0, walk.DEFAULT_BASE_HEIGHT, 1, 0, 0, 0]
    snap["qpos"][0, 7:] = walk.DEFAULT_POSE
    snap["sensordata"][0, 0:3] = walk.ORIENTATION_TARGET  # upvector_torso
    snap["sensordata"][0, 34:38] = [1, 0, 0, 0]  # orientation_pelvis
    snap["feet_pos"][...] = 0.0
    snap["phase"][0] = [0.0, -math.pi / 2]
    snap["phase_dt"][0] = 0.1
    snap["feet_air_time"][...] = 0.0
    snap["last_contact"][...] = 0
    snap["feet_peak_height"][...] = 0.0
    snap["noise_u"][...] = 0.5  # zero noise whatever the level
    return snap


def run(snap, impl):
    k = kernels.load("g1_walk", impl, num_envs=snap["qpos"].shape[0], noise_level=1.0)
    return k.update_state(snap)


def term(out, name):
    return out["term_means"][TERM[name]]


@pytest.fixture(params=kernels.IMPLS)
def impl(request):
    return request.param


def test_tracking_terms(impl):
    snap = crafted()
    snap["commands"][0] = [0.5, -0.2, 0.3]
    snap["sensordata"][0, walk.S_LOCAL_LINVEL_PELVIS : walk.S_LOCAL_LINVEL_PELVIS + 2] = [0.2, 0.1]
    snap["sensordata"][0, walk.S_GYRO_PELVIS + 2] = -0.2
    out = run(snap, impl)
    assert term(out, "tracking_lin_vel") == pytest.approx(math.exp(-(0.3**2 + 0.3**2) / 0.25), rel=1e-6)
    assert term(out, "tracking_ang_vel") == pytest.approx(math.exp(-1.0), rel=1e-6)


def test_feet_phase_target_height(impl):
    # rz(0) = 0.15 (top of the swing), rz(-pi/2) = 0.15 * b(0.5) = 0.075.
    snap = crafted()
    snap["commands"][0] = [0.5, 0.0, 0.0]  # mask on through the command
    snap["feet_pos"][0, :, 2] = [0.15, 0.075]
    assert term(run(snap, impl), "feet_phase") == pytest.approx(1.0, abs=1e-6)
    snap = crafted()
    snap["commands"][0] = [0.5, 0.0, 0.0]
    snap["feet_pos"][0, :, 2] = [0.25, 0.075]  # 0.1 m off: exp(-0.01 / 0.01)
    assert term(run(snap, impl), "feet_phase") == pytest.approx(math.exp(-1.0), rel=1e-5)
    snap = crafted()  # standing still with a zero command: the mask is off
    snap["feet_pos"][0, :, 2] = [0.15, 0.075]
    assert term(run(snap, impl), "feet_phase") == 0.0


def test_dof_pos_limits_and_pose(impl):
    snap = crafted()
    snap["qpos"][0, 7 + 3] = walk.SOFT_UPPER[3] + 0.2  # left knee past its soft upper limit
    snap["qpos"][0, 7 + 12] = walk.SOFT_LOWER[12] - 0.1  # waist yaw below its soft lower limit
    out = run(snap, impl)
    assert term(out, "dof_pos_limits") == pytest.approx(0.3, rel=1e-5)
    d_knee = walk.SOFT_UPPER[3] + 0.2 - walk.DEFAULT_POSE[3]
    d_waist = walk.SOFT_LOWER[12] - 0.1 - walk.DEFAULT_POSE[12]
    assert term(out, "pose") == pytest.approx(d_knee**2 + d_waist**2, rel=1e-5)
    assert term(out, "joint_deviation_knee") == pytest.approx(abs(d_knee), rel=1e-5)
    assert term(out, "stand_still") == pytest.approx(abs(d_knee) + abs(d_waist), rel=1e-5)


def test_stand_still_and_hip_deviation_gates(impl):
    snap = crafted()
    snap["qpos"][0, 7 + np.array(walk.HIP_ROLL_YAW)] = walk.DEFAULT_POSE[list(walk.HIP_ROLL_YAW)] + [
        0.1,
        0.2,
        0.3,
        0.4,
    ]
    snap["commands"][0] = [0.0, 0.2, 0.0]  # sidestep: only the two hip_yaw joints count
    out = run(snap, impl)
    assert term(out, "joint_deviation_hip") == pytest.approx(0.2 + 0.4, rel=1e-5)
    assert term(out, "stand_still") == 0.0
    snap["commands"][0] = [0.0, 0.0, 0.0]
    out = run(snap, impl)
    assert term(out, "joint_deviation_hip") == pytest.approx(1.0, rel=1e-5)
    assert term(out, "stand_still") == pytest.approx(1.0, rel=1e-5)


def test_feet_air_time_and_bookkeeping(impl):
    snap = crafted()
    snap["sensordata"][0, walk.S_FOOT_FLOOR[0]] = 3  # left foot lands after 0.5 s in the air
    snap["feet_air_time"][0] = [0.5, 0.1]
    snap["feet_peak_height"][0] = [0.12, 0.05]
    snap["feet_pos"][0, :, 2] = [0.03, 0.09]
    out = run(snap, impl)
    # Only the left foot has a first contact: min((0.5 + 0.02 - 0.2) * 1, 0.3) = 0.3.
    assert term(out, "feet_air_time") == pytest.approx(0.3, rel=1e-6)
    assert term(out, "feet_slip") == 0.0  # pelvis not moving
    priv = out["privileged_obs"][0]
    np.testing.assert_allclose(priv[walk.PRIV_AIR_TIME : walk.PRIV_AIR_TIME + 2], [0.52, 0.12], rtol=1e-6)
    np.testing.assert_array_equal(priv[walk.PRIV_CONTACT : walk.PRIV_CONTACT + 2], [1.0, 0.0])
    np.testing.assert_allclose(snap["feet_air_time"][0], [0.0, 0.12], rtol=1e-6)
    np.testing.assert_array_equal(snap["last_contact"][0], [1, 0])
    np.testing.assert_allclose(snap["feet_peak_height"][0], [0.0, 0.09], rtol=1e-6)


def test_feet_air_time_has_no_lower_clip(impl):
    snap = crafted()
    snap["sensordata"][0, walk.S_FOOT_FLOOR[1]] = 1
    snap["feet_air_time"][0] = [0.0, 0.1]  # right foot lands after a short hop: 0.12 - 0.2 = -0.08
    assert term(run(snap, impl), "feet_air_time") == pytest.approx(-0.08, rel=1e-5)


@pytest.mark.parametrize(
    ("address", "value"),
    [
        (walk.S_UPVECTOR_TORSO + 2, -0.3),  # torso upside down
        (walk.S_FOOT_FOOT, 1),
        (walk.S_FOOT_SHIN[0], 1),
        (walk.S_FOOT_SHIN[1], 2),
    ],
)
def test_termination(impl, address, value):
    snap = crafted()
    snap["sensordata"][0, address] = value
    out = run(snap, impl)
    assert out["done"][0] == 1
    assert term(out, "termination") == 1.0


def test_hand_thigh_contact_is_a_collision_not_a_termination(impl):
    snap = crafted()
    snap["sensordata"][0, walk.S_HAND_THIGH[1]] = 1
    out = run(snap, impl)
    assert out["done"][0] == 0
    assert term(out, "collision") == 1.0


def test_contact_force(impl):
    snap = crafted()
    snap["sensordata"][0, walk.S_FOOT_FORCE[0] + 2] = -650.0
    snap["sensordata"][0, walk.S_FOOT_FORCE[1] + 2] = 400.0
    assert term(run(snap, impl), "contact_force") == pytest.approx(150.0, rel=1e-6)


def test_reward_is_dt_times_weighted_sum(impl):
    snap = make_inputs("g1_walk", 1, seed=42)
    out = run(snap, impl)
    weights = np.array(list(walk.REWARD_SCALES.values()))
    assert out["reward"][0] == pytest.approx(walk.DT * float(weights @ out["term_means"]), rel=1e-5, abs=1e-6)


def test_observation_layout_and_phase_advance(impl):
    snap = crafted()
    snap["commands"][0] = [0.4, -0.3, 0.2]
    snap["last_actions"][0] = np.arange(walk.NUM_JOINTS) / 100
    snap["phase"][0] = [3.0, -math.pi / 2]
    snap["phase_dt"][0] = 0.2
    out = run(snap, impl)
    obs, priv = out["obs"][0], out["privileged_obs"][0]
    np.testing.assert_allclose(obs[walk.OBS_GRAVITY : walk.OBS_GRAVITY + 3], [0, 0, -1], atol=1e-7)
    np.testing.assert_allclose(obs[walk.OBS_COMMAND : walk.OBS_COMMAND + 3], [0.4, -0.3, 0.2], rtol=1e-6)
    np.testing.assert_allclose(obs[walk.OBS_JOINT_POS : walk.OBS_JOINT_POS + 29], 0.0, atol=1e-7)
    np.testing.assert_allclose(
        obs[walk.OBS_LAST_ACT : walk.OBS_LAST_ACT + 29], np.arange(29) / 100, rtol=1e-6
    )
    # Phase features use the phase before its advance: cos L, cos R, sin L, sin R.
    np.testing.assert_allclose(obs[walk.OBS_PHASE :], [math.cos(3.0), 0.0, math.sin(3.0), -1.0], atol=1e-6)
    np.testing.assert_array_equal(priv[: walk.OBS_DIM], obs)
    assert priv[walk.PRIV_HEIGHT] == pytest.approx(walk.DEFAULT_BASE_HEIGHT)
    # phi <- fmod(phi + dphi + pi, 2 pi) - pi: 3.2 wraps to 3.2 - 2 pi.
    np.testing.assert_allclose(snap["phase"][0], [3.2 - 2 * math.pi, -math.pi / 2 + 0.2], atol=1e-6)


def test_noise_uses_the_predrawn_buffer(impl):
    snap = crafted()
    snap["noise_u"][0, :] = 1.0 - 1e-7  # (2u - 1) ~ +1: each noisy entry moves up by its scale
    out = run(snap, impl)
    obs = out["obs"][0]
    np.testing.assert_allclose(obs[0:3], walk.NOISE_SCALES["linvel"], rtol=1e-5)
    np.testing.assert_allclose(obs[3:6], walk.NOISE_SCALES["gyro"], rtol=1e-5)
    np.testing.assert_allclose(obs[6:9], [0.05, 0.05, -1 + 0.05], rtol=1e-5)
    np.testing.assert_allclose(obs[12:41], walk.NOISE_SCALES["joint_pos"], rtol=1e-4)
    np.testing.assert_allclose(obs[41:70], walk.NOISE_SCALES["joint_vel"], rtol=1e-5)
