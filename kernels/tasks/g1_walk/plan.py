"""g1_walk as a term plan: the term library (typed parameters, what each term reads) and the default plan.

The default plan is spec E2: the 15 active reward terms in order with the scales of spec A4, the termination of
spec A5 and the two observations of spec A3. The library also holds playground terms whose scale is 0 in the
default plan (so sub-plans and extended plans can use them) and ``dof_acc``, which reads ``qacc``: the hot-slice
snapshot has no ``qacc``, so a plan using it is refused.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kernels.spec import (
    POSITIVE,
    ObservationGroup,
    ObservationTerm,
    RewardTerm,
    TaskPlan,
    TermDef,
    TerminationTerm,
)
from kernels.tasks.g1_walk import constants as task

# --- typed parameters --------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Tracking:
    sigma: float = field(default=task.TRACKING_SIGMA, metadata=POSITIVE)


@dataclass(frozen=True, kw_only=True)
class Orientation:
    target_x: float = task.ORIENTATION_TARGET[0]
    target_y: float = task.ORIENTATION_TARGET[1]
    target_z: float = task.ORIENTATION_TARGET[2]


@dataclass(frozen=True, kw_only=True)
class AirTime:
    threshold_min: float = task.FEET_AIR_TIME_MIN
    clip: float = task.FEET_AIR_TIME_CLIP


@dataclass(frozen=True, kw_only=True)
class FeetPhase:
    swing_height: float = task.MAX_FOOT_HEIGHT
    sigma: float = field(default=0.01, metadata=POSITIVE)
    mask_speed: float = task.PHASE_MASK_SPEED
    mask_command: float = task.STAND_STILL_CMD_NORM


@dataclass(frozen=True, kw_only=True)
class StandStill:
    command_threshold: float = task.STAND_STILL_CMD_NORM


@dataclass(frozen=True, kw_only=True)
class ContactForce:
    max_force: float = task.MAX_CONTACT_FORCE


@dataclass(frozen=True, kw_only=True)
class HipDeviation:
    sidestep_vy: float = task.HIP_SIDESTEP_VY


@dataclass(frozen=True, kw_only=True)
class BaseHeight:
    target: float = 0.5


# --- the term library ---------------------------------------------------------------------------------------

QPOS, QVEL, SD = "qpos", "qvel", "sensordata"


def _reward(name: str, *reads: str, params: type | None = None) -> TermDef:
    return TermDef(name=name, kind="reward", reads=reads, **({"params": params} if params else {}))


def _obs(name: str, dim: int, *reads: str, noise: str | None = None) -> TermDef:
    column = task.NOISE_COLUMNS[noise] if noise else None
    return TermDef(name=name, kind="observation", reads=reads, dim=dim, noise_column=column)


_TERMS = [
    _reward("tracking_lin_vel", SD, "commands", params=Tracking),
    _reward("tracking_ang_vel", SD, "commands", params=Tracking),
    _reward("ang_vel_xy", SD),
    _reward("orientation", SD, params=Orientation),
    _reward("feet_slip", SD),
    _reward("feet_air_time", SD, "feet_air_time", "last_contact", params=AirTime),
    _reward("feet_phase", SD, "feet_pos", "phase", "commands", params=FeetPhase),
    _reward("termination"),
    _reward("stand_still", QPOS, "commands", params=StandStill),
    _reward("collision", SD),
    _reward("contact_force", SD, params=ContactForce),
    _reward("joint_deviation_hip", QPOS, "commands", params=HipDeviation),
    _reward("joint_deviation_knee", QPOS),
    _reward("dof_pos_limits", QPOS),
    _reward("pose", QPOS),
    # Scale 0 in the playground config: available to plans, absent from the default one.
    _reward("lin_vel_z", SD),
    _reward("base_height", QPOS, params=BaseHeight),
    _reward("torques", "actuator_force"),
    _reward("action_rate", "actions", "last_actions"),
    _reward("energy", QVEL, "actuator_force"),
    _reward("alive"),
    _reward("dof_acc", "qacc"),  # not in the hot-slice snapshot: plans using it are refused
    TermDef(name="torso_upside_down", kind="termination", reads=(SD,)),
    TermDef(name="feet_contact", kind="termination", reads=(SD,)),
    TermDef(name="foot_shin_contact", kind="termination", reads=(SD,)),
    TermDef(name="nan_state", kind="termination", reads=(QPOS, QVEL)),
    _obs("linvel", 3, SD, noise="linvel"),
    _obs("gyro", 3, SD, noise="gyro"),
    _obs("gravity", 3, SD, noise="gravity"),
    _obs("command", 3, "commands"),
    _obs("joint_pos", task.NUM_JOINTS, QPOS, noise="joint_pos"),
    _obs("joint_vel", task.NUM_JOINTS, QVEL, noise="joint_vel"),
    _obs("last_act", task.NUM_JOINTS, "last_actions"),
    _obs("phase", 4, "phase"),
    _obs("accelerometer", 3, SD),
    _obs("global_angvel", 3, SD),
    _obs("base_height", 1, QPOS),
    _obs("actuator_force", task.NUM_JOINTS, "actuator_force"),
    _obs("feet_contact", 2, SD),
    _obs("feet_linvel", 6, SD),
    _obs("feet_air_time", 2, "feet_air_time"),
]
LIBRARY: dict[str, dict[str, TermDef]] = {
    kind: {t.name: t for t in _TERMS if t.kind == kind} for kind in ("reward", "termination", "observation")
}

# --- the default plan (spec E2) -----------------------------------------------------------------------------


def build(**fields) -> TaskPlan:
    """A g1_walk plan validated against this library and the spec E2 snapshot."""
    return TaskPlan.build(
        task=task.TASK,
        library=LIBRARY,
        snapshot_names={s.name for s in task.CONTRACT.snapshot},
        dt=fields.pop("dt", task.DT),
        **fields,
    )


def _noisy(name: str) -> ObservationTerm:
    return ObservationTerm(name=name, noise=task.NOISE_SCALES[name])


DEFAULT_PLAN = build(
    rewards=[RewardTerm(name=name, weight=weight) for name, weight in task.REWARD_SCALES.items()],
    terminations=[
        TerminationTerm(name=name)
        for name in ("torso_upside_down", "feet_contact", "foot_shin_contact", "nan_state")
    ],
    observations=[
        ObservationGroup(
            name="obs",
            terms=(
                _noisy("linvel"),
                _noisy("gyro"),
                _noisy("gravity"),
                ObservationTerm(name="command"),
                _noisy("joint_pos"),
                _noisy("joint_vel"),
                ObservationTerm(name="last_act"),
                ObservationTerm(name="phase"),
            ),
        ),
        ObservationGroup(
            name="privileged_obs",
            include="obs",
            terms=tuple(
                ObservationTerm(name=name)
                for name in (
                    "gyro",
                    "accelerometer",
                    "gravity",
                    "linvel",
                    "global_angvel",
                    "joint_pos",
                    "joint_vel",
                    "base_height",
                    "actuator_force",
                    "feet_contact",
                    "feet_linvel",
                    "feet_air_time",
                )
            ),
        ),
    ],
    noise_level=task.NOISE_LEVEL,
)
