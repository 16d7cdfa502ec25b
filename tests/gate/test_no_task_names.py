"""The gate and the asv suites name no task: they ask the declared subject's registry (``gate.meter.subject``).

A string constant in their code that holds a task name of this repository's registry is a second declaration of
the task; docstrings, comments and argparse help (examples for users) are text, not code, and may name one.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import kernels

ROOT = Path(__file__).resolve().parents[2]
SUITES = ("_common.py", "hot_slice.py", "cost.py", "collector.py")


def _files() -> list[Path]:
    gate = [p for p in sorted((ROOT / "gate").rglob("*.py")) if "tools" not in p.relative_to(ROOT).parts[1:2]]
    return gate + [ROOT / "benchmarks" / name for name in SUITES]


def _text_nodes(tree: ast.AST) -> set[int]:
    """ids of the constants that are text: docstrings and the values of ``help=`` keywords."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            first = node.body[0] if node.body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first.value))
        elif isinstance(node, ast.keyword) and node.arg == "help":
            out |= {id(n) for n in ast.walk(node.value)}
    return out


def named(source: str, names: tuple[str, ...]) -> list[tuple[int, str]]:
    """(line, constant) of every string constant in ``source`` that names one of ``names``, text aside."""
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, names)) + r")\b")
    tree = ast.parse(source)
    text = _text_nodes(tree)
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in text
        and pattern.search(node.value)
    ]


def test_the_scan_finds_a_task_in_code_and_not_in_text():
    source = (
        '"""Docs may say g1_walk."""\n'
        "def f():\n"
        '    """So may a docstring: g1_walk."""\n'
        '    p.add_argument("--task", help="g1_walk or another")  # and a comment: g1_walk\n'
        '    return {"g1_walk": 1}, f"{x}/g1_walk"\n'
    )
    assert [line for line, _ in named(source, ("g1_walk",))] == [5, 5]


def test_no_module_of_the_gate_or_the_suites_names_a_task():
    assert len(kernels.TASKS) >= 2
    found = [
        f"{path.relative_to(ROOT)}:{line}: {value!r}"
        for path in _files()
        for line, value in named(path.read_text(), tuple(kernels.TASKS))
    ]
    assert found == []
