"""What every task shares names no task: a task is its package (``kernels/tasks/<task>/``), and the shared code
(the registry, the kernel base, the code generator, the collector, ...) asks the registry for the rest."""

from __future__ import annotations

import ast
from pathlib import Path

import kernels
from kernels import registry

PACKAGE = Path(kernels.__file__).resolve().parent
TASKS_DIR = PACKAGE / "tasks"


def _shared_modules() -> list[Path]:
    return sorted(
        p
        for p in PACKAGE.rglob("*.py")
        if "__pycache__" not in p.parts and not (p.parent != TASKS_DIR and p.is_relative_to(TASKS_DIR))
    )


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the docstring nodes (examples there may name a task)."""
    found = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and body:
            first = body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def _names(tree: ast.AST):
    """(line, text) of every string constant (docstrings aside) and identifier in ``tree``."""
    docs = _docstrings(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            yield node.lineno, node.value
        elif isinstance(node, ast.Name):
            yield node.lineno, node.id
        elif isinstance(node, ast.Attribute) and not (
            isinstance(node.value, ast.Name) and node.value.id == "ast"
        ):
            yield node.lineno, node.attr  # (``ast.walk`` is the standard library's)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            yield node.lineno, node.name
        elif isinstance(node, ast.arg) or (isinstance(node, ast.keyword) and node.arg):
            yield node.lineno, node.arg
        elif isinstance(node, ast.alias):
            yield node.lineno, f"{node.name} {node.asname or ''}"
        elif isinstance(node, ast.ImportFrom) and node.module:
            yield node.lineno, node.module


def test_the_scan_sees_the_tasks_own_modules_as_naming_them():
    """The check below would find a task's name: it does in the task's own package."""
    for task in registry.TASKS:
        tree = ast.parse((TASKS_DIR / task / "__init__.py").read_text())
        assert any(
            task in text or "walk" in text.lower() or "motion" in text.lower() for _, text in _names(tree)
        )


def test_no_shared_module_names_a_task():
    words = {
        *registry.TASKS,
        *(part for task in registry.TASKS for part in task.split("_")[1:]),
    }  # g1_walk, walk
    found = []
    for path in _shared_modules():
        for line, text in _names(ast.parse(path.read_text())):
            hits = sorted(w for w in words if w in text.lower())
            if hits:
                found.append(f"{path.relative_to(PACKAGE.parent)}:{line}: {text!r} names {', '.join(hits)}")
    assert found == []
