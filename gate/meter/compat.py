"""Can this meter measure the subject it is given? The registry API it calls, and the tasks it has inputs for.

The gate measures a pull request's subject with the base commit's meter. A head that renames the registry's
functions, or adds a task the base's meter has no synthetic snapshot for, cannot be measured that way: every
benchmark process records what is missing (``problems``) in the sidecar, and the gate answers with an error row
that says so instead of a failed benchmark or a silent gap. Nothing here raises: a meter that cannot measure says
why.
"""

from __future__ import annotations

import importlib

# What the meter calls on the subject, by module.
API = {
    "kernels": ("TASKS", "IMPLS", "REFERENCE", "load", "copy_snapshot"),
    "kernels.registry": ("available", "contract", "default_plan", "task_module", "load", "REFERENCE"),
    "kernels.kernel": ("max_threads", "resolve_threads", "Kernel"),
    "kernels.sim.collector": ("Collector", "PHASES", "PHYSICS_PARTS", "OVERHEAD_PHASES"),
}


def api_problems() -> list[str]:
    """What of ``API`` the subject lacks, one sentence each (empty: the meter can call it)."""
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
    return problems


def task_problems(tasks) -> list[str]:
    """Tasks of the subject this meter has no synthetic snapshot for (a task added by the change)."""
    from gate.meter.synthetic import TASKS as KNOWN

    return [
        f"the meter has no synthetic snapshot for task {t!r} (it knows {', '.join(KNOWN)}): a new task is measured "
        "once its meter support has merged"
        for t in tasks
        if t not in KNOWN
    ]


def problems() -> list[str]:
    """Everything that keeps this meter from measuring the subject, or an empty list."""
    found = api_problems()
    if found:
        return found
    import kernels

    return task_problems(kernels.TASKS)
