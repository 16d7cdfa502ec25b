"""What exists: tasks, implementations, and how to load one (the API other tools build on)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from importlib import import_module
from types import ModuleType

import numpy as np

from kernels.contract import TaskContract
from kernels.kernel import Kernel
from kernels.spec import TaskPlan

# task -> module holding its constants and CONTRACT
_TASK_MODULES = {"g1_walk": "kernels.tasks.g1_walk", "g1_motion": "kernels.tasks.g1_motion"}
TASKS: tuple[str, ...] = tuple(_TASK_MODULES)

# implementation -> "module:Class" per task. "numpy" is the reference every other one is checked against.
_IMPLEMENTATIONS: dict[str, dict[str, str]] = {
    "numpy": {
        "g1_walk": "kernels.reference.kernel:ReferenceWalk",
        "g1_motion": "kernels.reference.kernel:ReferenceMotion",
    },
    "handwritten": {
        "g1_walk": "kernels.handwritten.g1_walk:HandwrittenWalk",
        "g1_motion": "kernels.handwritten.g1_motion:HandwrittenMotion",
    },
    "assembled": {
        "g1_walk": "kernels.assembled.g1_walk:AssembledWalk",
        "g1_motion": "kernels.assembled.g1_motion:AssembledMotion",
    },
    "assembled_generic": {
        "g1_walk": "kernels.assembled.generic_walk:GenericWalk",
        "g1_motion": "kernels.assembled.generic_motion:GenericMotion",
    },
}
IMPLS: tuple[str, ...] = tuple(_IMPLEMENTATIONS)
REFERENCE = "numpy"


def available(task: str) -> tuple[str, ...]:
    """The implementations that have a kernel for ``task``."""
    return tuple(impl for impl in IMPLS if _check_task(task) in _IMPLEMENTATIONS[impl])


def _check_task(task: str) -> str:
    if task not in _TASK_MODULES:
        raise ValueError(f"unknown task {task!r}; known tasks: {', '.join(TASKS)}")
    return task


def task_module(task: str) -> ModuleType:
    return import_module(_TASK_MODULES[_check_task(task)])


def contract(task: str) -> TaskContract:
    return task_module(task).CONTRACT


def default_plan(task: str) -> TaskPlan:
    """The task's spec E plan (the one the hand-written kernels implement)."""
    return import_module(f"{_TASK_MODULES[_check_task(task)]}_plan").DEFAULT_PLAN


def _kernel_class(task: str, impl: str) -> Callable[..., Kernel]:
    _check_task(task)
    if impl not in _IMPLEMENTATIONS:
        raise ValueError(f"unknown implementation {impl!r}; known implementations: {', '.join(IMPLS)}")
    target = _IMPLEMENTATIONS[impl].get(task)
    if target is None:
        raise ValueError(f"implementation {impl!r} has no kernel for task {task!r}")
    module, name = target.split(":")
    return getattr(import_module(module), name)


def load(
    task: str,
    impl: str = "handwritten",
    *,
    num_envs: int,
    threads: int | None = None,
    noise_level: float | None = None,
    plan: TaskPlan | None = None,
) -> Kernel:
    """Load ``impl`` of ``task`` for ``num_envs`` envs.

    ``threads`` defaults to the measured cap for N (see ``kernels.kernel.MIN_ENVS_PER_THREAD``); a request is
    also capped by N. ``plan`` defaults to the task's spec E plan; ``noise_level``, when given, replaces the
    plan's (0.0 gives the noise-free observations).
    """
    cls = _kernel_class(task, impl)
    plan = default_plan(task) if plan is None else plan
    if not isinstance(plan, TaskPlan):
        raise ValueError(f"plan must be a kernels.spec.TaskPlan, got {type(plan).__name__}")
    if noise_level is not None:
        plan = plan.replace(noise_level=noise_level)
    return cls(plan=plan, num_envs=num_envs, threads=threads)


def copy_snapshot(snap: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """An independent copy (state arrays are updated in place, so each implementation needs its own)."""
    return {name: arr.copy() for name, arr in snap.items()}
