"""Which implementation lacks which library term: one row per (task, kind, term) of the registry's libraries.

Every term of a task's library should run in every implementation that takes plans. A gap is a failure unless
``ALLOWED`` names it with its reason. ``test_coverage_table`` prints the whole table (``pytest -s``).
"""

from __future__ import annotations

from importlib import import_module

import pytest

from kernels import registry

KINDS = ("reward", "termination", "observation")

# (task, impl, kind, term) -> why that implementation lacks the term. impl "*" is every implementation.
ALLOWED: dict[tuple[str, str, str, str], str] = {
    (
        "g1_walk",
        "*",
        "reward",
        "dof_acc",
    ): "reads qacc, which the hot-slice snapshot has not: no plan can use it",
}
# The hand-written kernels implement their task's default plan only (they refuse any other), by design.
DEFAULT_ONLY = {"handwritten"}


def implemented(task: str, impl: str) -> dict[str, set[str]]:
    """The library terms ``impl`` has code for, by kind."""
    if impl in DEFAULT_ONLY:
        plan = registry.default_plan(task)
        return {
            "reward": {r.fn for r in plan.rewards},
            "termination": {t.fn for t in plan.terminations},
            "observation": {o.fn for g in plan.observations for o in g.terms},
        }
    module = import_module(registry.kernel_class(task, impl).__module__)
    if impl == registry.default().reference(task):
        tables = (module.REWARD_TERMS, module.TERMINATIONS, module.OBSERVATIONS)
    elif impl in ("assembled", "assembled_generic"):
        tables = (module.REWARDS, module.TERMINATIONS, module.OBSERVATIONS)
    else:
        raise AssertionError(f"test_term_coverage does not know where {impl!r} lists its terms: add it here")
    return {kind: set(table) for kind, table in zip(KINDS, tables, strict=True)}


def _library(task: str) -> dict[str, tuple[str, ...]]:
    return {kind: tuple(terms) for kind, terms in registry.default_plan(task).library.items()}


def _reason(task: str, impl: str, kind: str, term: str) -> str | None:
    if impl in DEFAULT_ONLY:
        return "implements the default plan only"
    return ALLOWED.get((task, impl, kind, term)) or ALLOWED.get((task, "*", kind, term))


ROWS = [(task, kind, term) for task in registry.TASKS for kind in KINDS for term in _library(task)[kind]]


@pytest.mark.parametrize(("task", "kind", "term"), ROWS, ids=["/".join(row) for row in ROWS])
def test_every_implementation_has_the_term(task, kind, term):
    missing = {
        impl: _reason(task, impl, kind, term)
        for impl in registry.available(task)
        if term not in implemented(task, impl)[kind]
    }
    unexplained = sorted(impl for impl, reason in missing.items() if reason is None)
    assert not unexplained, (
        f"{task} {kind} term {term!r} has no code in {', '.join(unexplained)}: implement it there, or add "
        "it to ALLOWED with the reason"
    )


@pytest.mark.parametrize("task", registry.TASKS)
def test_implementations_have_no_terms_outside_the_library(task):
    library = _library(task)
    for impl in registry.available(task):
        for kind, names in implemented(task, impl).items():
            assert names <= set(library[kind]), (impl, kind, sorted(names - set(library[kind])))


def test_allowed_gaps_are_real_gaps():
    """An ALLOWED entry whose term every implementation now has is stale: remove it."""
    for (task, impl, kind, term), reason in ALLOWED.items():
        impls = registry.available(task) if impl == "*" else (impl,)
        assert term in _library(task)[kind], (task, kind, term)
        assert any(term not in implemented(task, i)[kind] for i in impls), (task, impl, kind, term, reason)


def test_coverage_table(capsys):
    """The table: one row per library term, one column per implementation; 'ok', or why it is missing."""
    lines = []
    for task in registry.TASKS:
        impls = registry.available(task)
        have = {impl: implemented(task, impl) for impl in impls}
        lines.append(f"{task:<44}" + "".join(f"{impl:>20}" for impl in impls))
        for kind in KINDS:
            for term in _library(task)[kind]:
                cells = []
                for impl in impls:
                    reason = (
                        None if term in have[impl][kind] else _reason(task, impl, kind, term) or "MISSING"
                    )
                    cells.append(
                        "ok" if reason is None else ("MISSING" if reason == "MISSING" else "allowed")
                    )
                lines.append(f"  {kind:<12}{term:<30}" + "".join(f"{c:>20}" for c in cells))
    table = "\n".join(lines)
    with capsys.disabled():
        print("\n" + table)
    assert "MISSING" not in table, table
