"""NumPy reference of the G1 joystick-walk ``update_state`` (spec A3-A5, E2): the semantics.

Written to be checked line by line against the spec: one function per reward term, named as the term, each
returning the unweighted per-env value f_k. Vectorised over envs; it may allocate.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kernels.tasks import g1_walk as task


@dataclass(frozen=True)
class Step:
    """Per-env quantities of one step, derived from the snapshot after foot bookkeeping steps 1-3 (spec A4)."""

    q: np.ndarray  # (N,29) joint positions qpos[7:]
    dq: np.ndarray  # (N,29) q - q0
    qd: np.ndarray  # (N,29) qvel[6:]
    local_linvel: np.ndarray  # (N,3) velocimeter local_linvel_pelvis
    gyro: np.ndarray  # (N,3) gyro_pelvis
    gravity: np.ndarray  # (N,3) R(orientation_pelvis)^T (0,0,-1)
    global_linvel: np.ndarray  # (N,3) global_linvel_pelvis
    global_angvel: np.ndarray  # (N,3) global_angvel_pelvis
    angvel_torso: np.ndarray  # (N,3) global_angvel_torso
    upvector_torso: np.ndarray  # (N,3)
    command: np.ndarray  # (N,3) vx, vy, wz
    contact: np.ndarray  # (N,2) bool, foot-floor found > 0
    first_contact: np.ndarray  # (N,2) bool
    air_time: np.ndarray  # (N,2) after += dt
    feet_z: np.ndarray  # (N,2) site z of left_foot, right_foot
    phase: np.ndarray  # (N,2) before the advance
    foot_force_z: np.ndarray  # (N,2)
    sensordata: np.ndarray  # (N,75)
    done: np.ndarray  # (N,) bool


# --- reward terms (spec A4), unweighted ------------------------------------------------------------------


def tracking_lin_vel(s: Step) -> np.ndarray:
    err = np.sum(np.square(s.command[:, :2] - s.local_linvel[:, :2]), axis=1)
    return np.exp(-err / task.TRACKING_SIGMA)


def tracking_ang_vel(s: Step) -> np.ndarray:
    return np.exp(-np.square(s.command[:, 2] - s.gyro[:, 2]) / task.TRACKING_SIGMA)


def ang_vel_xy(s: Step) -> np.ndarray:
    return np.sum(np.square(s.angvel_torso[:, :2]), axis=1)


def orientation(s: Step) -> np.ndarray:
    return np.sum(np.square(s.upvector_torso - np.array(task.ORIENTATION_TARGET)), axis=1)


def feet_slip(s: Step) -> np.ndarray:
    # Pelvis velocity, not foot velocity (spec A4).
    return np.linalg.norm(s.global_linvel[:, :2], axis=1) * np.sum(s.contact, axis=1)


def feet_air_time(s: Step) -> np.ndarray:
    air = np.where(s.first_contact, s.air_time - task.FEET_AIR_TIME_MIN, 0.0)
    return np.sum(np.minimum(air, task.FEET_AIR_TIME_CLIP), axis=1)


def swing_height(phase: np.ndarray) -> np.ndarray:
    """rz(phi): the cubic-Bezier foot-height target of the gait (spec A4 helper terms)."""
    x = (phase + np.pi) / (2 * np.pi)

    def bezier(t: np.ndarray) -> np.ndarray:
        return t**3 + 3 * t**2 * (1 - t)

    stance = task.MAX_FOOT_HEIGHT * bezier(2 * x)
    swing = task.MAX_FOOT_HEIGHT * (1 - bezier(2 * x - 1))
    return np.where(x <= 0.5, stance, swing)


def feet_phase(s: Step) -> np.ndarray:
    err = np.sum(np.square(s.feet_z - swing_height(s.phase)), axis=1)
    moving = (np.linalg.norm(s.global_linvel[:, :2], axis=1) > task.PHASE_MASK_SPEED) | (
        np.abs(s.global_angvel[:, 2]) > task.PHASE_MASK_SPEED
    )
    mask = moving | (np.linalg.norm(s.command, axis=1) > task.STAND_STILL_CMD_NORM)
    return np.where(mask, np.exp(-err / 0.01), 0.0)  # an indicator: 0 where the mask is off, whatever err is


def termination(s: Step) -> np.ndarray:
    return s.done.astype(np.float32)


def stand_still(s: Step) -> np.ndarray:
    still = np.linalg.norm(s.command, axis=1) < task.STAND_STILL_CMD_NORM
    return np.where(still, np.sum(np.abs(s.dq), axis=1), 0.0)


def collision(s: Step) -> np.ndarray:
    hand_thigh = s.sensordata[:, list(task.S_HAND_THIGH)] > 0
    return np.any(hand_thigh, axis=1).astype(np.float32)


def contact_force(s: Step) -> np.ndarray:
    return np.sum(np.maximum(np.abs(s.foot_force_z) - task.MAX_CONTACT_FORCE, 0.0), axis=1)


def joint_deviation_hip(s: Step) -> np.ndarray:
    dev = np.abs(s.dq[:, list(task.HIP_ROLL_YAW)])
    sidestep = s.command[:, 1] > task.HIP_SIDESTEP_VY
    # Weights (0, 1, 0, 1) when sidestepping: the two hip_roll joints are free.
    counted = ~(sidestep[:, None] & np.array([True, False, True, False]))
    return np.sum(np.where(counted, dev, 0.0), axis=1)


def joint_deviation_knee(s: Step) -> np.ndarray:
    return np.sum(np.abs(s.dq[:, list(task.KNEES)]), axis=1)


def dof_pos_limits(s: Step) -> np.ndarray:
    below = np.maximum(task.SOFT_LOWER - s.q, 0.0)
    above = np.maximum(s.q - task.SOFT_UPPER, 0.0)
    return np.sum(below + above, axis=1)


def pose(s: Step) -> np.ndarray:
    return np.sum(np.square(s.dq), axis=1)


# name -> f(Step) -> (N,) unweighted value, in spec E2 order.
REWARD_TERMS = {
    f.__name__: f
    for f in (
        tracking_lin_vel,
        tracking_ang_vel,
        ang_vel_xy,
        orientation,
        feet_slip,
        feet_air_time,
        feet_phase,
        termination,
        stand_still,
        collision,
        contact_force,
        joint_deviation_hip,
        joint_deviation_knee,
        dof_pos_limits,
        pose,
    )
}
assert tuple(REWARD_TERMS) == task.TERMS


# --- termination and observations (spec A5, A3) ---------------------------------------------------------


def is_done(qpos: np.ndarray, qvel: np.ndarray, sensordata: np.ndarray) -> np.ndarray:
    fallen = sensordata[:, task.S_UPVECTOR_TORSO + 2] < 0
    feet_touch = sensordata[:, task.S_FOOT_FOOT] > 0
    foot_shin = np.any(sensordata[:, list(task.S_FOOT_SHIN)] > 0, axis=1)
    not_finite = np.isnan(qpos).any(axis=1) | np.isnan(qvel).any(axis=1)
    return fallen | feet_touch | foot_shin | not_finite


def gravity_in_frame(quat: np.ndarray) -> np.ndarray:
    """R(q)^T (0,0,-1) for unit quaternions (w,x,y,z): minus the third row of R(q)."""
    w, x, y, z = (quat[:, k] for k in range(4))
    return -np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], axis=1)


def noisy(x: np.ndarray, u: np.ndarray, scale: float, noise_level: float) -> np.ndarray:
    return x + noise_level * (2 * u - 1) * scale


def observations(s: Step, snap: dict[str, np.ndarray], noise_level: float) -> tuple[np.ndarray, np.ndarray]:
    u = snap["noise_u"]
    cols, scales = task.NOISE_COLUMNS, task.NOISE_SCALES

    def noise_of(name: str, x: np.ndarray) -> np.ndarray:
        return noisy(x, u[:, cols[name] : cols[name] + x.shape[1]], scales[name], noise_level)

    state = np.concatenate(
        [
            noise_of("linvel", s.local_linvel),
            noise_of("gyro", s.gyro),
            noise_of("gravity", s.gravity),
            s.command,
            noise_of("joint_pos", s.q) - task.DEFAULT_POSE,
            noise_of("joint_vel", s.qd),
            snap["last_actions"],
            np.cos(s.phase),
            np.sin(s.phase),
        ],
        axis=1,
    )
    privileged = np.concatenate(
        [
            state,
            s.gyro,
            s.sensordata[:, task.S_ACCEL_PELVIS : task.S_ACCEL_PELVIS + 3],
            s.gravity,
            s.local_linvel,
            s.global_angvel,
            s.dq,
            s.qd,
            snap["qpos"][:, 2:3],
            snap["actuator_force"],
            s.contact,
            s.sensordata[:, task.S_FOOT_LINVEL : task.S_FOOT_LINVEL + 6],
            s.air_time,
        ],
        axis=1,
    )
    return state, privileged


# --- update_state ---------------------------------------------------------------------------------------


def update_state(
    snap: dict[str, np.ndarray], out: dict[str, np.ndarray], *, noise_level: float = task.NOISE_LEVEL
) -> None:
    """One step of spec A4's order: bookkeeping 1-3, obs/done/rewards, bookkeeping 5, phase advance."""
    sd = snap["sensordata"]
    qpos, qvel = snap["qpos"], snap["qvel"]
    contact = np.stack([sd[:, i] > 0 for i in task.S_FOOT_FLOOR], axis=1)
    air = snap["feet_air_time"]
    # Bookkeeping 1-3.
    first_contact = (air > 0) & (contact | (snap["last_contact"] > 0))
    air += task.DT
    feet_z = snap["feet_pos"][:, :, 2]
    peak = snap["feet_peak_height"]
    np.maximum(peak, feet_z, out=peak)

    q = qpos[:, 7:]
    s = Step(
        q=q,
        dq=q - task.DEFAULT_POSE,
        qd=qvel[:, 6:],
        local_linvel=sd[:, task.S_LOCAL_LINVEL_PELVIS : task.S_LOCAL_LINVEL_PELVIS + 3],
        gyro=sd[:, task.S_GYRO_PELVIS : task.S_GYRO_PELVIS + 3],
        gravity=gravity_in_frame(sd[:, task.S_ORIENTATION_PELVIS : task.S_ORIENTATION_PELVIS + 4]),
        global_linvel=sd[:, task.S_GLOBAL_LINVEL_PELVIS : task.S_GLOBAL_LINVEL_PELVIS + 3],
        global_angvel=sd[:, task.S_GLOBAL_ANGVEL_PELVIS : task.S_GLOBAL_ANGVEL_PELVIS + 3],
        angvel_torso=sd[:, task.S_GLOBAL_ANGVEL_TORSO : task.S_GLOBAL_ANGVEL_TORSO + 3],
        upvector_torso=sd[:, task.S_UPVECTOR_TORSO : task.S_UPVECTOR_TORSO + 3],
        command=snap["commands"],
        contact=contact,
        first_contact=first_contact,
        air_time=air.copy(),
        feet_z=feet_z,
        phase=snap["phase"].copy(),
        foot_force_z=sd[:, [a + 2 for a in task.S_FOOT_FORCE]],
        sensordata=sd,
        done=is_done(qpos, qvel, sd),
    )

    obs, privileged = observations(s, snap, noise_level)
    values = np.stack([f(s) for f in REWARD_TERMS.values()], axis=1)
    scales = np.array(list(task.REWARD_SCALES.values()))
    out["obs"][...] = obs
    out["privileged_obs"][...] = privileged
    out["done"][...] = s.done
    out["reward"][...] = task.DT * (values @ scales)
    out["term_means"][...] = values.mean(axis=0, dtype=np.float64)

    # Bookkeeping 5 and the phase advance.
    air *= ~contact
    snap["last_contact"][...] = contact
    peak *= ~contact
    phase = snap["phase"]
    phase[...] = np.fmod(phase + snap["phase_dt"][:, None] + np.pi, 2 * np.pi) - np.pi
