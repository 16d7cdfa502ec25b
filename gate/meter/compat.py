"""Can this meter measure the subject it is given? The registry API it calls, and each task's part of the meter.

The gate measures a pull request's subject with the base commit's meter. A head that renames the registry's
methods cannot be measured that way, and neither can a task the head adds: a task's snapshots, tolerances and
cost weights are its ``meter.py``, which is meter and so read from the base (``gate.provenance``), and the base
has none for a task it does not have (the measurement tree holds no meter.py of the head's,
``gate.runner.trees``). Every benchmark process records what is missing (``problems``) in the sidecar, and the
gate answers with an error row that says so instead of a failed benchmark or a silent gap; the task is measured
once it has merged, by the next change's base. Nothing here raises: a meter that cannot measure says why.
"""

from __future__ import annotations

import importlib

# What the meter calls on the subject, by module (the registry's methods on an instance of it).
API = {
    "kernels.registry": ("Registry",),
    "kernels.kernel": ("max_threads", "resolve_threads", "Kernel"),
    "kernels.sim.collector": ("Collector", "PHASES", "PHYSICS_PARTS", "OVERHEAD_PHASES"),
}
REGISTRY = (
    "tasks",
    "impls",
    "spec",
    "reference",
    "available",
    "contract",
    "default_plan",
    "task_module",
    "kernel_class",
    "load",
    "meter",
    "env_class",
)
METER = ("make_inputs", "ATOL", "RTOL")  # what the meter reads from a task's meter.py


def api_problems() -> list[str]:
    """What of ``API`` (and of the declared subject's registry, ``REGISTRY``) the subject lacks, one sentence
    each (empty: the meter can call it)."""
    problems = []
    for module, names in API.items():
        try:
            found = importlib.import_module(module)
        except Exception as exc:  # the subject failed to import: that is the finding
            problems.append(f"the meter cannot import {module}: {type(exc).__name__}: {exc}")
            continue
        missing = [n for n in names if not hasattr(found, n)]
        if missing:
            problems.append(f"the meter calls {module}.{', '.join(missing)}, which the subject no longer has")
    if problems:
        return problems
    from gate.meter import subject

    try:
        registry = subject.registry()
    except Exception as exc:  # a declaration or a task package the registry refuses
        return [f"the meter cannot read the declared subject's registry: {type(exc).__name__}: {exc}"]
    missing = [n for n in REGISTRY if not hasattr(registry, n)]
    if missing:
        problems.append(
            f"the meter calls Registry.{', '.join(missing)}, which the subject's kernels.registry no longer has"
        )
    return problems


def task_problem(task: str) -> str | None:
    """Why this meter cannot measure ``task`` (its meter.py is missing or lacks what the meter reads), or None."""
    from gate.meter import subject

    try:
        found = subject.meter(task)
    except ModuleNotFoundError as exc:
        if not (exc.name or "").endswith(f"{task}.meter"):
            return f"the meter cannot import task {task!r}'s meter.py: {type(exc).__name__}: {exc}"
        return (
            f"the meter has no synthetic snapshot for task {task!r}: a task's meter.py (snapshots, tolerances) is "
            "read from the base, which does not have it; a new task is measured once it has merged"
        )
    except Exception as exc:
        return f"the meter cannot import task {task!r}'s meter.py: {type(exc).__name__}: {exc}"
    missing = [n for n in METER if not hasattr(found, n)]
    if missing:
        return f"task {task!r}'s meter.py has no {', '.join(missing)}, which the meter reads"
    return None


def measurable() -> list[str]:
    """The declared subject's tasks this meter can measure (empty when it cannot call the registry)."""
    if api_problems():
        return []
    from gate.meter import subject

    return [t for t in subject.registry().tasks if task_problem(t) is None]


def problems() -> list[str]:
    """Everything that keeps this meter from measuring the subject, or an empty list."""
    found = api_problems()
    if found:
        return found
    from gate.meter import subject

    tasks = [p for p in map(task_problem, subject.registry().tasks) if p]
    return tasks + subject.problems()
