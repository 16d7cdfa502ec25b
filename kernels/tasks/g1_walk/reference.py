"""NumPy reference of the G1 joystick-walk ``update_state`` (spec A3-A5, E2): the semantics, driven by a plan.

Written to be checked line by line against the spec: one function per term of the library
(``kernels.tasks.g1_walk.plan``), named as the term. A reward term returns the unweighted per-env value f_k, a
termination term a per-env flag, an observation term its noise-free (N, dim) block. ``update_state`` computes
what the plan lists, so every valid sub-plan has a reference answer. Vectorised over envs; it may allocate.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from kernels.kernel import Kernel
from kernels.spec import TaskPlan
from kernels.tasks.g1_walk import constants as task
from kernels.tasks.g1_walk import plan as plan_lib


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
    snap: dict[str, np.ndarray]  # the rest of the snapshot, as given
    done: np.ndarray | None = None  # (N,) bool, from the plan's terminations


# --- reward terms (spec A4), unweighted ------------------------------------------------------------------


def tracking_lin_vel(s: Step, p: plan_lib.Tracking) -> np.ndarray:
    err = np.sum(np.square(s.command[:, :2] - s.local_linvel[:, :2]), axis=1)
    return np.exp(-err / p.sigma)


def tracking_ang_vel(s: Step, p: plan_lib.Tracking) -> np.ndarray:
    return np.exp(-np.square(s.command[:, 2] - s.gyro[:, 2]) / p.sigma)


def ang_vel_xy(s: Step, p: object) -> np.ndarray:
    return np.sum(np.square(s.angvel_torso[:, :2]), axis=1)


def orientation(s: Step, p: plan_lib.Orientation) -> np.ndarray:
    return np.sum(np.square(s.upvector_torso - np.array([p.target_x, p.target_y, p.target_z])), axis=1)


def feet_slip(s: Step, p: object) -> np.ndarray:
    # Pelvis velocity, not foot velocity (spec A4).
    return np.linalg.norm(s.global_linvel[:, :2], axis=1) * np.sum(s.contact, axis=1)


def feet_air_time(s: Step, p: plan_lib.AirTime) -> np.ndarray:
    air = np.where(s.first_contact, s.air_time - p.threshold_min, 0.0)
    return np.sum(np.minimum(air, p.clip), axis=1)


def swing_height(phase: np.ndarray, height: float = task.MAX_FOOT_HEIGHT) -> np.ndarray:
    """rz(phi): the cubic-Bezier foot-height target of the gait (spec A4 helper terms)."""
    x = (phase + np.pi) / (2 * np.pi)

    def bezier(t: np.ndarray) -> np.ndarray:
        return t**3 + 3 * t**2 * (1 - t)

    stance = height * bezier(2 * x)
    swing = height * (1 - bezier(2 * x - 1))
    return np.where(x <= 0.5, stance, swing)


def feet_phase(s: Step, p: plan_lib.FeetPhase) -> np.ndarray:
    err = np.sum(np.square(s.feet_z - swing_height(s.phase, p.swing_height)), axis=1)
    moving = (np.linalg.norm(s.global_linvel[:, :2], axis=1) > p.mask_speed) | (
        np.abs(s.global_angvel[:, 2]) > p.mask_speed
    )
    mask = moving | (np.linalg.norm(s.command, axis=1) > p.mask_command)
    return np.where(
        mask, np.exp(-err / p.sigma), 0.0
    )  # an indicator: 0 where the mask is off, whatever err is


def termination(s: Step, p: object) -> np.ndarray:
    return s.done.astype(np.float32)


def stand_still(s: Step, p: plan_lib.StandStill) -> np.ndarray:
    still = np.linalg.norm(s.command, axis=1) < p.command_threshold
    return np.where(still, np.sum(np.abs(s.dq), axis=1), 0.0)


def collision(s: Step, p: object) -> np.ndarray:
    hand_thigh = s.sensordata[:, list(task.S_HAND_THIGH)] > 0
    return np.any(hand_thigh, axis=1).astype(np.float32)


def contact_force(s: Step, p: plan_lib.ContactForce) -> np.ndarray:
    return np.sum(np.maximum(np.abs(s.foot_force_z) - p.max_force, 0.0), axis=1)


def joint_deviation_hip(s: Step, p: plan_lib.HipDeviation) -> np.ndarray:
    dev = np.abs(s.dq[:, list(task.HIP_ROLL_YAW)])
    sidestep = s.command[:, 1] > p.sidestep_vy
    # Weights (0, 1, 0, 1) when sidestepping: the two hip_roll joints are free.
    counted = ~(sidestep[:, None] & np.array([True, False, True, False]))
    return np.sum(np.where(counted, dev, 0.0), axis=1)


def joint_deviation_knee(s: Step, p: object) -> np.ndarray:
    return np.sum(np.abs(s.dq[:, list(task.KNEES)]), axis=1)


def dof_pos_limits(s: Step, p: object) -> np.ndarray:
    below = np.maximum(task.SOFT_LOWER - s.q, 0.0)
    above = np.maximum(s.q - task.SOFT_UPPER, 0.0)
    return np.sum(below + above, axis=1)


def pose(s: Step, p: object) -> np.ndarray:
    return np.sum(np.square(s.dq), axis=1)


def lin_vel_z(s: Step, p: object) -> np.ndarray:
    torso_vz = s.sensordata[:, task.S_GLOBAL_LINVEL_TORSO + 2]
    return np.square(s.global_linvel[:, 2]) + np.square(torso_vz)


def base_height(s: Step, p: plan_lib.BaseHeight) -> np.ndarray:
    return np.square(s.snap["qpos"][:, task.QPOS_BASE_Z] - p.target)


def torques(s: Step, p: object) -> np.ndarray:
    return np.sum(np.abs(s.snap["actuator_force"]), axis=1)


def action_rate(s: Step, p: object) -> np.ndarray:
    return np.sum(np.square(s.snap["actions"] - s.snap["last_actions"]), axis=1)


def energy(s: Step, p: object) -> np.ndarray:
    return np.sum(np.abs(s.qd) * np.abs(s.snap["actuator_force"]), axis=1)


def alive(s: Step, p: object) -> np.ndarray:
    return np.ones(s.q.shape[0], dtype=np.float32)


# --- terminations (spec A5) --------------------------------------------------------------------------------


def torso_upside_down(s: Step, p: object) -> np.ndarray:
    return s.upvector_torso[:, 2] < 0


def feet_contact(s: Step, p: object) -> np.ndarray:
    return s.sensordata[:, task.S_FOOT_FOOT] > 0


def foot_shin_contact(s: Step, p: object) -> np.ndarray:
    return np.any(s.sensordata[:, list(task.S_FOOT_SHIN)] > 0, axis=1)


def nan_state(s: Step, p: object) -> np.ndarray:
    return np.isnan(s.snap["qpos"]).any(axis=1) | np.isnan(s.snap["qvel"]).any(axis=1)


# --- observation blocks (spec A3), noise-free -------------------------------------------------------------


def gravity_in_frame(quat: np.ndarray) -> np.ndarray:
    """R(q)^T (0,0,-1) for unit quaternions (w,x,y,z): minus the third row of R(q)."""
    w, x, y, z = (quat[:, k] for k in range(4))
    return -np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], axis=1)


def noisy(x: np.ndarray, u: np.ndarray, scale: float, noise_level: float) -> np.ndarray:
    """x + level * (2u - 1) * scale (spec E1)."""
    return x + noise_level * (2 * u - 1) * scale


OBSERVATIONS = {
    "linvel": lambda s: s.local_linvel,
    "gyro": lambda s: s.gyro,
    "gravity": lambda s: s.gravity,
    "command": lambda s: s.command,
    "joint_pos": lambda s: s.dq,  # q - q0; its noise is added to q (spec A3), the same sum
    "joint_vel": lambda s: s.qd,
    "last_act": lambda s: s.snap["last_actions"],
    "phase": lambda s: np.concatenate([np.cos(s.phase), np.sin(s.phase)], axis=1),
    "accelerometer": lambda s: s.sensordata[:, task.S_ACCEL_PELVIS : task.S_ACCEL_PELVIS + 3],
    "global_angvel": lambda s: s.global_angvel,
    "base_height": lambda s: s.snap["qpos"][:, task.QPOS_BASE_Z : task.QPOS_BASE_Z + 1],
    "actuator_force": lambda s: s.snap["actuator_force"],
    "feet_contact": lambda s: s.contact,
    "feet_linvel": lambda s: s.sensordata[:, task.S_FOOT_LINVEL : task.S_FOOT_LINVEL + 6],
    "feet_air_time": lambda s: s.air_time,
}

# name -> f(Step, params) for every reward and termination term of the library.
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
        lin_vel_z,
        base_height,
        torques,
        action_rate,
        energy,
        alive,
    )
}
TERMINATIONS = {f.__name__: f for f in (torso_upside_down, feet_contact, foot_shin_contact, nan_state)}
assert set(REWARD_TERMS) == set(plan_lib.LIBRARY["reward"]) - {
    "dof_acc"
}  # dof_acc reads qacc: never buildable
assert set(TERMINATIONS) == set(plan_lib.LIBRARY["termination"])
assert set(OBSERVATIONS) == set(plan_lib.LIBRARY["observation"])


def observation(plan: TaskPlan, group: str, s: Step, values: dict[str, np.ndarray]) -> np.ndarray:
    """The (N, width) array of one observation group, included groups first."""
    g = plan.group(group)
    blocks = [values[g.include]] if g.include else []
    u = s.snap["noise_u"]
    for term in g.terms:
        block = OBSERVATIONS[term.fn](s)
        if term.noise:
            column = plan.definition(term).noise_column
            block = noisy(block, u[:, column : column + block.shape[1]], term.noise, plan.noise_level)
        blocks.append(block)
    return np.concatenate(blocks, axis=1)


# --- update_state ---------------------------------------------------------------------------------------


def update_state(snap: dict[str, np.ndarray], out: dict[str, np.ndarray], plan: TaskPlan) -> None:
    """One step of spec A4's order: bookkeeping 1-3, obs/done/rewards, bookkeeping 5, phase advance."""
    sd = snap["sensordata"]
    qpos, qvel = snap["qpos"], snap["qvel"]
    contact = np.stack([sd[:, i] > 0 for i in task.S_FOOT_FLOOR], axis=1)
    air = snap["feet_air_time"]
    # Bookkeeping 1-3.
    first_contact = (air > 0) & (contact | (snap["last_contact"] > 0))
    air += plan.dt
    feet_z = snap["feet_pos"][:, :, 2]
    peak = snap["feet_peak_height"]
    np.maximum(peak, feet_z, out=peak)

    q = qpos[:, task.QPOS_JOINTS :]
    s = Step(
        q=q,
        dq=q - task.DEFAULT_POSE,
        qd=qvel[:, task.QVEL_JOINTS :],
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
        foot_force_z=sd[:, list(task.S_FOOT_FORCE_Z)],
        sensordata=sd,
        snap=snap,
    )
    done = np.zeros(q.shape[0], dtype=bool)
    for t in plan.terminations:
        done |= TERMINATIONS[t.fn](s, t.params)
    s = dataclasses.replace(s, done=done)

    groups: dict[str, np.ndarray] = {}
    for g in plan.observations:
        groups[g.name] = observation(plan, g.name, s, groups)
        out[g.name][...] = groups[g.name]
    values = np.zeros((q.shape[0], len(plan.rewards)))
    for k, r in enumerate(plan.rewards):
        values[:, k] = REWARD_TERMS[r.fn](s, r.params)
    weights = np.array([r.weight for r in plan.rewards])
    out["done"][...] = done
    out["reward"][...] = plan.dt * (values @ weights)
    out["term_means"][...] = values.mean(axis=0, dtype=np.float64)

    # Bookkeeping 5 and the phase advance.
    air *= ~contact
    snap["last_contact"][...] = contact
    peak *= ~contact
    phase = snap["phase"]
    phase[...] = np.fmod(phase + snap["phase_dt"][:, None] + np.pi, 2 * np.pi) - np.pi


class ReferenceWalk(Kernel):
    """The reference as a kernel: ``update_state`` above, on the kernel's plan."""

    def __init__(self, **kwargs):
        super().__init__(task.CONTRACT, **kwargs)

    def _run(self, snap: Mapping[str, np.ndarray], out: dict[str, np.ndarray]) -> None:
        update_state(snap, out, self.plan)
