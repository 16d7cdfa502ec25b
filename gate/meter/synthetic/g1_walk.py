"""Synthetic g1_walk snapshot (spec E2 arrays): a crowd of G1s mostly walking, some fallen."""

from __future__ import annotations

import numpy as np

from gate.meter.synthetic import MARGIN, keep_away, keep_norm_away
from kernels.geometry import quat_axes, quat_from_euler
from kernels.tasks.g1_walk import constants as task

FALLEN_FRACTION = 0.01
FEET_TOUCH_FRACTION = 0.01  # the two together make ~2% done, as spec E4 asks
HAND_THIGH_FRACTION = 0.03


def make_walk_inputs(n: int, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng([seed, 0x6771])
    f32 = np.float32

    def normal(scale: float, *shape: int) -> np.ndarray:
        return rng.normal(0.0, scale, size=(n, *shape))

    # Base pose: upright with small tilt, any heading; a few fallen (torso up-vector pointing down).
    fallen = rng.random(n) < FALLEN_FRACTION
    roll, pitch, yaw = normal(0.08), normal(0.08), rng.uniform(-np.pi, np.pi, n)
    pitch = np.where(fallen, rng.uniform(2.0, 2.8, n) * rng.choice([-1.0, 1.0], n), pitch)
    pelvis_q = quat_from_euler(roll, pitch, yaw)
    torso_q = quat_from_euler(roll + normal(0.05), pitch + 0.073 + normal(0.05), yaw + normal(0.1))
    pelvis_x, pelvis_z = quat_axes(pelvis_q)
    torso_x, torso_z = quat_axes(torso_q)
    torso_z[:, 2] = np.where(
        np.abs(torso_z[:, 2]) < 0.05, np.sign(torso_z[:, 2] + 1e-12) * 0.05, torso_z[:, 2]
    )

    qpos = np.empty((n, 36))
    qpos[:, :2] = rng.uniform(-5.0, 5.0, (n, 2))
    qpos[:, 2] = task.DEFAULT_BASE_HEIGHT + normal(0.03)
    qpos[:, 3:7] = pelvis_q
    joints = task.DEFAULT_POSE + normal(0.2, task.NUM_JOINTS)
    near_limit = rng.random((n, task.NUM_JOINTS)) < 0.05  # some joints past their soft limits
    lo, hi = task.JOINT_RANGE[:, 0], task.JOINT_RANGE[:, 1]
    joints = np.where(near_limit, rng.uniform(lo, hi, (n, task.NUM_JOINTS)), joints)
    qpos[:, 7:] = joints
    qvel = np.concatenate([normal(0.4, 3), normal(0.6, 3), normal(1.5, task.NUM_JOINTS)], axis=1)

    # Contacts: foot-floor counts 0..4; a few feet touching each other; a few hands on thighs.
    in_contact = rng.random((n, 2)) < 0.6
    counts = np.where(in_contact, rng.integers(1, 5, (n, 2)), 0)
    feet_touch = rng.random(n) < FEET_TOUCH_FRACTION
    hand_thigh = rng.random((n, 2)) < HAND_THIGH_FRACTION

    sd = np.zeros((n, 75))
    sd[:, 0:3] = torso_z  # upvector_torso
    sd[:, 3:6] = normal(0.5, 3)  # local_linvel_torso
    sd[:, 6:9] = normal(0.5, 3)  # local_linvel_pelvis
    sd[:, 9:15] = np.tile([0.0, 0.0, 9.81], 2) + normal(1.5, 6)  # accelerometers torso, pelvis
    sd[:, 15:21] = normal(0.6, 6)  # gyro torso, pelvis
    sd[:, 21:24] = pelvis_z  # upvector_pelvis
    sd[:, 24:27], sd[:, 27:30] = torso_x, pelvis_x  # forwardvector torso, pelvis
    sd[:, 30:34], sd[:, 34:38] = torso_q, pelvis_q  # orientation torso, pelvis
    sd[:, 38:41] = normal(0.5, 3)  # global_linvel_torso
    sd[:, 41:44] = normal(0.5, 3)  # global_linvel_pelvis
    sd[:, 41:43] = keep_norm_away(sd[:, 41:43], task.PHASE_MASK_SPEED)
    sd[:, 44:50] = normal(0.6, 6)  # global_angvel torso, pelvis
    sd[:, 49] = keep_away(keep_away(sd[:, 49], task.PHASE_MASK_SPEED), -task.PHASE_MASK_SPEED)
    sd[:, 50:56] = normal(0.5, 6)  # foot global linvels
    _, foot_up = quat_axes(quat_from_euler(normal(0.1, 2), normal(0.1, 2), np.zeros((n, 2))))
    sd[:, 56:62] = foot_up.reshape(n, 6)
    force = normal(20.0, 2, 3)
    force[:, :, 2] = np.where(in_contact, rng.uniform(50.0, 700.0, (n, 2)), 0.0)  # some past 500 N
    sd[:, 62:68] = force.reshape(n, 6)
    sd[:, 68:70] = counts
    sd[:, 70] = feet_touch
    sd[:, 73:75] = hand_thigh

    # Commands: 10% exactly zero, the others kept clear of the 0.01 norm gate and the 0.1 vy gate.
    commands = (
        np.stack([rng.uniform(-1, 1, n), rng.uniform(-0.5, 0.5, n), rng.uniform(-1, 1, n)], axis=1)
        * (rng.random(n) >= 0.1)[:, None]
    )
    norm = np.linalg.norm(commands, axis=1, keepdims=True)
    small = (norm > 0) & (norm < 0.02)
    commands = np.where(small, commands / np.where(norm > 0, norm, 1.0) * 0.02, commands)
    commands[:, 1] = np.where(commands[:, 1] == 0, 0.0, keep_away(commands[:, 1], task.HIP_SIDESTEP_VY))

    # Gait: phase_dt from f ~ U[1.25, 1.5]; phases clear of the wrap after the advance.
    phase_dt = 2 * np.pi * task.DT * rng.uniform(1.25, 1.5, n)
    left = rng.uniform(-np.pi, np.pi, n)
    phase = np.stack([left, np.fmod(left + 2 * np.pi, 2 * np.pi) - np.pi], axis=1)
    advanced = phase + phase_dt[:, None]
    phase = np.where(np.abs(advanced - np.pi) < MARGIN, phase - 4 * MARGIN, phase)

    # Foot bookkeeping consistent with the last step: airborne feet have no last contact.
    airborne = rng.random((n, 2)) < 0.5
    air_time = np.where(airborne, rng.uniform(0.02, 0.8, (n, 2)), 0.0)
    peak = np.where(airborne, rng.uniform(0.03, 0.2, (n, 2)), 0.0)
    feet_pos = np.empty((n, 2, 3))
    feet_pos[:, :, :2] = qpos[:, None, :2] + normal(0.1, 2, 2)
    feet_pos[:, :, 2] = np.where(in_contact, rng.uniform(0.02, 0.04, (n, 2)), rng.uniform(0.04, 0.2, (n, 2)))

    arrays = {
        "qpos": qpos,
        "qvel": qvel,
        "sensordata": sd,
        "actuator_force": np.clip(normal(15.0, task.NUM_JOINTS), -88, 88),
        "feet_pos": feet_pos,
        "actions": normal(0.5, task.NUM_JOINTS),
        "last_actions": normal(0.5, task.NUM_JOINTS),
        "commands": commands,
        "phase_dt": phase_dt,
        "noise_u": rng.random((n, task.NOISE_DIM)),
        "phase": phase,
        "feet_air_time": air_time,
        "last_contact": (~airborne).astype(np.uint8),
        "feet_peak_height": peak,
    }
    snap = {s.name: np.ascontiguousarray(arrays[s.name], dtype=s.dtype) for s in task.CONTRACT.snapshot}
    snap["noise_u"] = np.minimum(snap["noise_u"], f32(1.0) - np.finfo(f32).epsneg)  # stay in [0, 1)
    return snap
