"""g1_motion as a term plan: the term library (typed parameters, what each term reads) and the default plan.

The default plan is spec E3: the 8 active reward terms of spec B3 in order with their weights and kernel widths,
the three terminations of spec B4 and the actor and critic observations of spec B5.
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
from kernels.tasks.g1_motion import constants as task


@dataclass(frozen=True, kw_only=True)
class ExpKernel:
    """exp(-error / std^2)."""

    std: float = field(metadata=POSITIVE)


@dataclass(frozen=True, kw_only=True)
class Threshold:
    """Done when the tested difference exceeds ``threshold``."""

    threshold: float


ROBOT = ("body_pos_w", "body_quat_w")
VELOCITIES = ("body_lin_vel_w", "body_ang_vel_w")
MOTION = ("motion_body_pos_w", "motion_body_quat_w", "time_steps")
MOTION_VEL = ("motion_body_lin_vel_w", "motion_body_ang_vel_w", "time_steps")
RELATIVE = ("rel_body_pos", "rel_body_quat")


def _reward(name: str, *reads: str, params: type | None = None) -> TermDef:
    return TermDef(name=name, kind="reward", reads=reads, **({"params": params} if params else {}))


def _obs(name: str, *reads: str) -> TermDef:
    column = task.NOISE_COLUMNS.get(name)
    dim = task.CRITIC_OBS_BLOCKS[name]
    return TermDef(name=name, kind="observation", reads=reads, dim=dim, noise_column=column)


_TERMS = [
    _reward("motion_global_anchor_pos", *ROBOT, *MOTION, params=ExpKernel),
    _reward("motion_global_anchor_ori", *ROBOT, *MOTION, params=ExpKernel),
    _reward("motion_body_pos", *ROBOT, *RELATIVE, params=ExpKernel),
    _reward("motion_body_ori", *ROBOT, *RELATIVE, params=ExpKernel),
    _reward("motion_body_lin_vel", *VELOCITIES, *MOTION_VEL, params=ExpKernel),
    _reward("motion_body_ang_vel", *VELOCITIES, *MOTION_VEL, params=ExpKernel),
    _reward("action_rate_l2", "actions", "last_actions"),
    _reward("joint_limit", "joint_pos"),
    TermDef(name="anchor_pos", kind="termination", reads=(*ROBOT, *MOTION), params=Threshold),
    TermDef(name="anchor_ori", kind="termination", reads=(*ROBOT, *MOTION), params=Threshold),
    TermDef(name="ee_body_pos", kind="termination", reads=(*ROBOT, *RELATIVE), params=Threshold),
    _obs("command", "motion_joint_pos", "motion_joint_vel", "time_steps"),
    _obs("motion_anchor_pos_b", *ROBOT, *MOTION),
    _obs("motion_anchor_ori_b", *ROBOT, *MOTION),
    _obs("body_pos", *ROBOT),
    _obs("body_ori", *ROBOT),
    _obs("base_lin_vel", *ROBOT, *VELOCITIES),
    _obs("base_ang_vel", *ROBOT, *VELOCITIES),
    _obs("joint_pos", "joint_pos"),
    _obs("joint_vel", "joint_vel"),
    _obs("actions", "actions"),
]
LIBRARY: dict[str, dict[str, TermDef]] = {
    kind: {t.name: t for t in _TERMS if t.kind == kind} for kind in ("reward", "termination", "observation")
}


def build(**fields) -> TaskPlan:
    """A g1_motion plan validated against this library and the spec E3 snapshot."""
    return TaskPlan.build(
        task=task.TASK,
        library=LIBRARY,
        snapshot_names={s.name for s in task.CONTRACT.snapshot},
        dt=fields.pop("dt", task.DT),
        **fields,
    )


DEFAULT_PLAN = build(
    rewards=[
        RewardTerm(
            name=name,
            weight=weight,
            params={"std": task.REWARD_STDS[name]} if name in task.REWARD_STDS else {},
        )
        for name, weight in task.REWARD_SCALES.items()
    ],
    terminations=[
        TerminationTerm(name=name, params={"threshold": threshold})
        for name, threshold in task.TERMINATION_THRESHOLDS.items()
    ],
    observations=[
        ObservationGroup(
            name="obs",
            terms=tuple(
                ObservationTerm(name=name, noise=task.NOISE_SCALES.get(name, 0.0)) for name in task.OBS_BLOCKS
            ),
        ),
        ObservationGroup(
            name="critic_obs", terms=tuple(ObservationTerm(name=name) for name in task.CRITIC_OBS_BLOCKS)
        ),
    ],
    noise_level=task.NOISE_LEVEL,
)
