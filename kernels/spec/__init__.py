"""Term plans (tasks' update_state as data: reward, termination and observation terms with typed params) and the
task spec every task package declares (``TaskSpec``)."""

from kernels.spec.plan import (
    POSITIVE,
    NoParams,
    ObservationGroup,
    ObservationTerm,
    PlanError,
    RewardTerm,
    TaskPlan,
    TermDef,
    TerminationTerm,
    plan_from_json,
)
from kernels.spec.task import TaskSpec

__all__ = [
    "POSITIVE",
    "NoParams",
    "ObservationGroup",
    "ObservationTerm",
    "PlanError",
    "RewardTerm",
    "TaskPlan",
    "TaskSpec",
    "TermDef",
    "TerminationTerm",
    "plan_from_json",
]
