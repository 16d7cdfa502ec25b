"""What exists: tasks, implementations, and how to load one (the API other tools build on).

A ``Registry`` is made from a package of tasks: each subpackage is one task, named by its package, and declares
it in its ``__init__.py`` as ``TASK = kernels.spec.TaskSpec(...)``. Discovery imports each spec (its contract and
plan) and nothing compiled, and neither imports Numba: a kernel's module is imported when the kernel is loaded.

This repository's tasks are ``kernels.tasks``; the module-level names (``TASKS``, ``IMPLS``, ``REFERENCE``,
``available``, ``contract``, ``default_plan``, ``load`` ...) are its registry's, made on first use::

    from kernels import registry
    registry.available("g1_walk")  # ('numpy', 'handwritten', 'assembled', 'assembled_generic')
    registry.Registry("my_team.tasks").load("my_task", "fused", num_envs=4096)
"""

from __future__ import annotations

import functools
import pkgutil
from collections.abc import Mapping
from importlib import import_module
from types import ModuleType

import numpy as np

from kernels.contract import TaskContract
from kernels.spec import TaskPlan, TaskSpec

DEFAULT = "kernels.tasks"  # this repository's package of tasks


class Registry:
    """The tasks of ``package`` (its subpackages, in the order of their names) and their implementations."""

    def __init__(self, package: str):
        self.package = package
        try:
            found = import_module(package)
        except ImportError as exc:
            raise ValueError(
                f"the package of tasks {package!r} cannot be imported ({exc}); check its name"
            ) from exc
        if not hasattr(found, "__path__"):
            raise ValueError(
                f"{package!r} is a module, not a package of tasks (each task is one of its subpackages)"
            )
        self._specs: dict[str, TaskSpec] = {}
        for info in sorted(pkgutil.iter_modules(found.__path__), key=lambda m: m.name):
            if info.ispkg:
                self._specs[info.name] = self._discover(info.name)
        if not self._specs:
            raise ValueError(f"the package of tasks {package!r} has no task: add a subpackage per task")
        self.tasks: tuple[str, ...] = tuple(self._specs)
        self.impls: tuple[str, ...] = tuple(
            dict.fromkeys(impl for spec in self._specs.values() for impl in spec.implementations)
        )

    def _discover(self, task: str) -> TaskSpec:
        module = import_module(f"{self.package}.{task}")
        spec = getattr(module, "TASK", None)
        if not isinstance(spec, TaskSpec):
            raise ValueError(
                f"{module.__name__} declares no task: its __init__.py must assign TASK = kernels.spec.TaskSpec(...) "
                f"(found {type(spec).__name__})"
            )
        if spec.contract.task != task:
            raise ValueError(
                f"{module.__name__}: the task's name is its package's, {task!r}, but its contract says "
                f"{spec.contract.task!r}; make them the same"
            )
        return spec

    def __repr__(self) -> str:
        return f"Registry({self.package!r}: {', '.join(self.tasks)})"

    def spec(self, task: str) -> TaskSpec:
        try:
            return self._specs[task]
        except (KeyError, TypeError):
            raise ValueError(f"unknown task {task!r}; known tasks: {', '.join(self.tasks)}") from None

    def reference(self, task: str) -> str:
        """The implementation that is ``task``'s semantics."""
        return self.spec(task).reference

    def available(self, task: str) -> tuple[str, ...]:
        """The implementations that have a kernel for ``task``."""
        return tuple(self.spec(task).implementations)

    def contract(self, task: str) -> TaskContract:
        return self.spec(task).contract

    def default_plan(self, task: str) -> TaskPlan:
        """The task's default plan (spec E: the one the hand-written kernels implement)."""
        return self.spec(task).plan

    def task_module(self, task: str) -> ModuleType:
        """The module of the task's constants, ``<task>.constants`` (the task package itself when it has none)."""
        try:
            return self._module(task, ".constants")
        except ModuleNotFoundError as exc:
            if exc.name != f"{self.package}.{task}.constants":
                raise
            return self._module(task, ".")

    def _module(self, task: str, module: str) -> ModuleType:
        """``module``, absolute or (when it starts with ".") relative to ``task``'s package."""
        return import_module(module, package=f"{self.package}.{self.spec(task).task}")

    def _resolve(self, task: str, target: str) -> type:
        module, name = target.split(":")
        return getattr(self._module(task, module), name)

    def kernel_class(self, task: str, impl: str) -> type:
        spec = self.spec(task)
        if impl not in spec.implementations:
            if impl in self.impls:
                raise ValueError(f"implementation {impl!r} has no kernel for task {task!r}")
            raise ValueError(
                f"unknown implementation {impl!r}; known implementations: {', '.join(self.impls)}"
            )
        return self._resolve(task, spec.implementations[impl])

    def load(
        self,
        task: str,
        impl: str,
        *,
        num_envs: int,
        threads: int | None = None,
        noise_level: float | None = None,
        plan: TaskPlan | None = None,
    ):
        """Load ``impl`` of ``task`` for ``num_envs`` envs (a ``kernels.kernel.Kernel``).

        ``threads`` defaults to the measured cap for N (see ``kernels.kernel.MIN_ENVS_PER_THREAD``); a request is
        also capped by N. ``plan`` defaults to the task's default plan; ``noise_level``, when given, replaces the
        plan's (0.0 gives the noise-free observations).
        """
        cls = self.kernel_class(task, impl)
        plan = self.default_plan(task) if plan is None else plan
        if not isinstance(plan, TaskPlan):
            raise ValueError(f"plan must be a kernels.spec.TaskPlan, got {type(plan).__name__}")
        if noise_level is not None:
            plan = plan.replace(noise_level=noise_level)
        return cls(impl=impl, plan=plan, num_envs=num_envs, threads=threads)

    def meter(self, task: str) -> ModuleType:
        """The task's part of the meter, ``<task>/meter.py`` (snapshots, tolerances, cost weights)."""
        return self._module(task, ".meter")

    def env_class(self, task: str) -> type | None:
        """The task's collector env (a ``kernels.sim.env.TaskEnv``), or None: the task has no collector."""
        spec = self.spec(task)
        return None if spec.env is None else self._resolve(task, spec.env)


def copy_snapshot(snap: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """An independent copy (state arrays are updated in place, so each implementation needs its own)."""
    return {name: arr.copy() for name, arr in snap.items()}


# --- this repository's registry ---------------------------------------------------------------------------------


@functools.cache
def default() -> Registry:
    """The registry of ``kernels.tasks``, made once per process."""
    return Registry(DEFAULT)


def common_reference(registry: Registry) -> str:
    """The reference every task of ``registry`` shares (ValueError when they differ)."""
    found = {registry.reference(t) for t in registry.tasks}
    if len(found) != 1:
        raise ValueError(
            f"the tasks of {registry.package} have different references ({', '.join(sorted(found))})"
        )
    return found.pop()


# The module-level functions: the default registry's methods of the same name.
_DELEGATED = ("available", "contract", "default_plan", "task_module", "kernel_class", "load")


def __getattr__(name: str):
    if name in _DELEGATED:
        return getattr(default(), name)
    if name == "TASKS":
        return default().tasks
    if name == "IMPLS":
        return default().impls
    if name == "REFERENCE":
        return common_reference(default())
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
