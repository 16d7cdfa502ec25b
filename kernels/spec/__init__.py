"""Term plans: tasks' update_state as data (reward, termination and observation terms with typed params)."""

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

__all__ = [
    "POSITIVE",
    "NoParams",
    "ObservationGroup",
    "ObservationTerm",
    "PlanError",
    "RewardTerm",
    "TaskPlan",
    "TermDef",
    "TerminationTerm",
    "plan_from_json",
]
