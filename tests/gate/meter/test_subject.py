"""The meter's view of the subject (``gate.meter.subject``) and what it cannot measure (``gate.meter.compat``)."""

from __future__ import annotations

import shutil
import sys
import uuid
from pathlib import Path

import pytest

import kernels
from gate import subject as declared
from gate.meter import compat, plan, subject
from gate.meter.profile import Profile

ROOT = Path(__file__).resolve().parents[3]


def test_this_tree_declares_the_registry_the_meter_measures():
    registry = subject.registry()
    assert subject.root() == ROOT and registry.tasks == kernels.TASKS and registry.impls == kernels.IMPLS
    assert subject.declaration().baseline in registry.impls and subject.problems() == []
    for task in registry.tasks:
        atol, rtol = subject.tolerance(task)
        assert 0 < atol < 1e-3 and 0 < rtol < 1e-3
        assert subject.cost_per_env(task, registry.reference(task)) > subject.cost_per_env(
            task, "any fused one"
        )
        assert set(subject.reads(task)) <= {s.name for s in registry.contract(task).snapshot}
    assert compat.problems() == [] and compat.measurable() == list(registry.tasks)


def test_the_plans_grid_is_the_registrys_and_the_tables():
    quick, full = plan.grid("quick"), plan.grid("full")
    registry = subject.registry()
    assert (
        set(quick.fused) == set(registry.tasks)
        and quick.scales == subject.declaration().profile("quick").scales
    )
    for task, impls in quick.fused.items():
        assert registry.reference(task) not in impls and set(impls) < set(registry.available(task))
        assert set(quick.paired[task]) <= set(full.paired[task]) <= set(impls)
    assert quick.collected == tuple(t for t in registry.tasks if registry.spec(t).env)


@pytest.fixture
def tree(tmp_path, monkeypatch):
    """A tree whose tasks package is a copy of this repository's first task, under a name of its own: what a head
    that adds a task looks like to the base's meter."""
    package = f"tasks_{uuid.uuid4().hex[:8]}"
    task = kernels.TASKS[0]
    shutil.copytree(
        ROOT / "kernels" / "tasks" / task,
        tmp_path / package / task,
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    (tmp_path / package / "__init__.py").write_text("")
    table = declared.from_texts((ROOT / "pyproject.toml").read_text(), None)
    text = table.toml().replace('tasks = "kernels.tasks"', f'tasks = "{package}"')
    (tmp_path / "fusegate.toml").write_text(
        text.replace('subject = ["kernels/"]', f'subject = ["{package}/"]')
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv(subject.VARIABLE, str(tmp_path))
    yield tmp_path, package, task
    for name in [m for m in sys.modules if m == package or m.startswith(f"{package}.")]:
        del sys.modules[name]


def test_the_tree_measured_is_the_profiles_one_variable():
    """fusegate's asv calls, the suites, the lockstep workers and the cost processes name the tree by one variable."""
    assert subject.VARIABLE in Profile.variables()
    assert Profile.from_env({subject.VARIABLE: "/a/tree"}).tree == "/a/tree"


def test_the_subject_root_is_the_variables_and_its_tasks_are_measured(tree):
    root, package, task = tree
    assert subject.root() == root.resolve() and subject.declaration().tasks == package
    assert subject.registry().tasks == (task,) and compat.problems() == []
    snapshot = {s.name for s in subject.registry().contract(task).snapshot}
    assert set(subject.make_inputs(task, 8, seed=0)) == snapshot


def test_a_task_without_a_meter_file_on_the_base_is_named_not_measured(tree):
    """A head that adds a task: its measurement tree has no meter.py of the head's (the task's meter is read from
    the base, which has none), so the base's meter says it has no snapshot for it, and measures the others."""
    root, package, task = tree
    (root / package / task / "meter.py").unlink()
    (problem,) = compat.problems()
    assert f"no synthetic snapshot for task {task!r}" in problem and "once it has merged" in problem
    assert compat.measurable() == []


def test_a_declaration_the_registry_contradicts_is_a_problem(tree):
    root, _, _ = tree
    text = (root / "fusegate.toml").read_text().replace('baseline = "handwritten"', 'baseline = "hand"')
    (root / "fusegate.toml").write_text(text)
    subject._declaration.cache_clear()
    problems = compat.problems()
    assert len(problems) == 1 and "baseline names 'hand', which no task implements" in problems[0]
