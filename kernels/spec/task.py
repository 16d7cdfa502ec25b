"""What a task is: one ``TaskSpec`` per task package, its ``__init__.py``'s module-level ``TASK``.

A task package ``<tasks package>/<task>/`` declares the task once::

    TASK = TaskSpec(
        contract=CONTRACT,  # the hot slice's arrays; contract.task is the package's name
        plan=DEFAULT_PLAN,  # the default plan (spec E)
        implementations={"numpy": ".reference:Reference", "handwritten": ".handwritten:Handwritten"},
        reference="numpy",  # the semantics every other implementation is checked against
        env=".env:Env",  # the collector's env (kernels.sim.env.TaskEnv), or None: no end-to-end collector
    )

``implementations`` is a literal dict (the gate reads it from the file's text without running it): an
implementation's name -> ``"module:Class"``, the module absolute or, when it starts with ".", relative to the task
package. The registry (``kernels.registry``) imports a kernel's module only when that kernel is loaded, so a spec
imports its contract and plan and nothing compiled.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from kernels.contract import TaskContract
from kernels.spec.plan import TaskPlan

# "module:Class": a dotted module path (leading dots: relative to the task package) and a class name
_TARGET = re.compile(r"^\.*[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*$|^\.+:[A-Za-z_]\w*$")


def _check_target(what: str, target: object) -> None:
    if not isinstance(target, str) or not _TARGET.match(target):
        raise ValueError(
            f"{what} must be a 'module:Class' string (the module absolute, or relative to the task package when "
            f"it starts with '.'), got {target!r}"
        )


@dataclass(frozen=True, kw_only=True)
class TaskSpec:
    """One task: its array contract, default plan, implementations, reference and collector env."""

    contract: TaskContract
    plan: TaskPlan
    implementations: Mapping[str, str]  # implementation name -> "module:Class"
    reference: str  # the implementation that is the semantics (a key of ``implementations``)
    env: str | None = None  # "module:Class" of the collector env, or None

    def __post_init__(self) -> None:
        if not isinstance(self.contract, TaskContract):
            raise ValueError(
                f"contract must be a kernels.contract.TaskContract, got {type(self.contract).__name__}"
            )
        if not isinstance(self.plan, TaskPlan):
            raise ValueError(f"plan must be a kernels.spec.TaskPlan, got {type(self.plan).__name__}")
        if self.plan.task != self.contract.task:
            raise ValueError(
                f"the plan is a {self.plan.task!r} plan but the contract is {self.contract.task!r}'s; "
                "give the task's own default plan"
            )
        if not isinstance(self.implementations, Mapping) or not self.implementations:
            raise ValueError(
                f"{self.contract.task}: implementations must be a non-empty dict of name -> 'module:Class', "
                f"got {self.implementations!r}"
            )
        for name, target in self.implementations.items():
            if not isinstance(name, str) or not name.isidentifier():
                raise ValueError(
                    f"{self.contract.task}: an implementation's name must be an identifier such as 'handwritten', "
                    f"got {name!r}"
                )
            _check_target(f"{self.contract.task}: implementation {name!r}", target)
        if self.reference not in self.implementations:
            raise ValueError(
                f"{self.contract.task}: reference {self.reference!r} is not one of its implementations "
                f"({', '.join(self.implementations)}); name the one that is the semantics"
            )
        if self.env is not None:
            _check_target(f"{self.contract.task}: env", self.env)
        object.__setattr__(self, "implementations", MappingProxyType(dict(self.implementations)))

    @property
    def task(self) -> str:
        return self.contract.task
