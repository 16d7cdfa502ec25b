"""The registry: tasks discovered from their packages, each declared once by its ``TaskSpec``; specs validated
where they are written; discovery imports no Numba; the collector's env comes from the registry."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

import kernels
from kernels import registry
from kernels.registry import Registry
from kernels.spec import TaskSpec


def test_every_task_package_declares_its_task_once_and_the_registry_derives_the_rest():
    reg = registry.default()
    assert reg.tasks == tuple(sorted(reg.tasks)) == kernels.TASKS
    for task in reg.tasks:
        spec = reg.spec(task)
        assert spec.task == task == reg.contract(task).task == reg.default_plan(task).task
        assert reg.available(task) == tuple(spec.implementations)
        assert reg.reference(task) in reg.available(task)
        for impl in reg.available(task):
            assert set(reg.impls) >= {impl}
            assert "impl" not in vars(reg.kernel_class(task, impl))  # the registry names it, not the class
        assert {"make_inputs", "ATOL", "RTOL", "COST_PER_ENV"} <= set(vars(reg.meter(task)))
        assert reg.env_class(task).__name__.endswith("Env")


@pytest.mark.parametrize(("task", "impl"), [(t, i) for t in kernels.TASKS for i in registry.available(t)])
def test_a_loaded_kernel_carries_the_name_its_spec_gives_it(task, impl):
    assert kernels.load(task, impl, num_envs=16).impl == impl


def test_importing_the_registry_and_discovering_the_tasks_imports_no_numba():
    code = (
        "import sys, kernels\n"
        "from kernels import registry\n"
        "registry.default().tasks, kernels.TASKS, kernels.IMPLS, kernels.REFERENCE\n"
        "print('numba' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def _package(root, name: str, tasks: dict[str, str]):
    """A package of tasks under ``root`` (on sys.path): each value is a task's ``__init__.py``."""
    (root / name).mkdir()
    (root / name / "__init__.py").write_text("")
    for task, text in tasks.items():
        (root / name / task).mkdir()
        (root / name / task / "__init__.py").write_text(textwrap.dedent(text))


def test_a_registry_of_another_package_and_what_it_refuses(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    absolute = {
        k: f"kernels.tasks.g1_walk{v}" for k, v in registry.default().spec("g1_walk").implementations.items()
    }
    declared = (
        "from kernels.spec import TaskSpec\nfrom kernels.tasks.g1_walk import TASK as WALK\n"
        f"TASK = TaskSpec(contract=WALK.contract, plan=WALK.plan, implementations={absolute!r}, reference='numpy')\n"
    )
    _package(tmp_path, "team_tasks", {"g1_walk": declared})
    reg = Registry("team_tasks")
    assert reg.tasks == ("g1_walk",) and reg.impls == registry.default().impls
    assert reg.kernel_class("g1_walk", "handwritten") is registry.default().kernel_class(
        "g1_walk", "handwritten"
    )
    assert reg.env_class("g1_walk") is None
    with pytest.raises(ValueError, match=r"unknown task 'walk'; known tasks: g1_walk"):
        reg.spec("walk")
    with pytest.raises(ValueError, match=r"unknown implementation 'fast'; known implementations: numpy, "):
        reg.kernel_class("g1_walk", "fast")

    _package(tmp_path, "misnamed", {"walk": "from kernels.tasks.g1_walk import TASK\n"})
    with pytest.raises(ValueError, match=r"its package's, 'walk', but its contract says 'g1_walk'"):
        Registry("misnamed")
    _package(tmp_path, "undeclared", {"walk": "CONTRACT = None\n"})
    with pytest.raises(ValueError, match=r"undeclared.walk declares no task: .*TASK = kernels.spec.TaskSpec"):
        Registry("undeclared")
    with pytest.raises(ValueError, match="cannot be imported"):
        Registry("no_such_tasks")


def test_a_collector_refuses_a_task_without_an_env(monkeypatch):
    from kernels.sim.collector import Collector

    walk = registry.default().spec("g1_walk")
    reg = registry.default()
    monkeypatch.setitem(reg._specs, "g1_walk", TaskSpec(**{**vars(walk), "env": None}))
    with pytest.raises(ValueError, match="task 'g1_walk' has no collector env"):
        Collector("g1_walk", "numpy", num_envs=4, registry=reg)


@pytest.mark.parametrize(
    ("change", "match"),
    [
        ({"implementations": {}}, "implementations must be a non-empty dict"),
        (
            {"implementations": {"numpy": "no colon"}},
            r"implementation 'numpy' must be a 'module:Class' string",
        ),
        ({"implementations": {"my impl": ".a:A"}}, "must be an identifier"),
        ({"reference": "fast"}, r"reference 'fast' is not one of its implementations \(numpy, handwritten"),
        ({"env": "env.py"}, "env must be a 'module:Class' string"),
        ({"contract": None}, "contract must be a kernels.contract.TaskContract"),
        ({"plan": None}, "plan must be a kernels.spec.TaskPlan"),
    ],
)
def test_a_spec_is_validated_where_it_is_written(change, match):
    walk = registry.default().spec("g1_walk")
    fields = {**vars(walk), "implementations": dict(walk.implementations), **change}
    with pytest.raises(ValueError, match=match):
        TaskSpec(**fields)


def test_a_spec_of_one_task_with_another_tasks_plan_is_refused():
    walk, motion = (registry.default().spec(t) for t in ("g1_walk", "g1_motion"))
    with pytest.raises(ValueError, match="the plan is a 'g1_motion' plan but the contract is 'g1_walk'"):
        TaskSpec(**{**vars(walk), "plan": motion.plan})


def test_the_module_level_names_are_the_default_registrys_made_on_first_use():
    code = (
        "import kernels\n"
        "from kernels import registry\n"
        "print(registry.default.cache_info().currsize)\n"
        "print(kernels.load.__self__ is registry.load.__self__ is registry.default())\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["0", "True"]  # importing the package discovers nothing
    for name in ("available", "contract", "default_plan", "task_module", "kernel_class", "load"):
        assert getattr(registry, name).__func__ is getattr(Registry, name)
