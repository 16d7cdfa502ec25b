"""The code's shape holds: the gate's layers point one way, the service never loads the kernels it judges, and
no package of the gate imports one that imports it back."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parents[1]


def test_import_linter_contracts_are_kept():
    """pyproject.toml's [tool.importlinter]: the layers, the service without kernels, kernels without the gate."""
    done = subprocess.run(
        [str(Path(sys.executable).parent / "lint-imports"), "--no-cache"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "0 broken" in done.stdout


def _package_graph() -> dict[str, set[str]]:
    graph = grimp.build_graph("gate", cache_dir=None)
    top = lambda m: ".".join(m.split(".")[:2])  # noqa: E731
    edges: dict[str, set[str]] = {}
    for module in graph.modules:
        for imported in graph.find_modules_directly_imported_by(module):
            a, b = top(module), top(imported)
            if a != b and a != "gate" and b != "gate":
                edges.setdefault(a, set()).add(b)
    return edges


def test_no_package_of_the_gate_is_in_an_import_cycle():
    edges = _package_graph()
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    cycles = []

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                cycles.append([*path[path.index(nxt) :], nxt])
            elif nxt not in state:
                visit(nxt, [*path, nxt])
        state[node] = 2

    for node in sorted(edges):
        if node not in state:
            visit(node, [node])
    assert not cycles, " ; ".join(" -> ".join(c) for c in cycles)
    assert {"gate.api", "gate.services", "gate.store", "gate.domain"} <= set(edges) | {"gate.domain"}


def test_the_service_starts_without_numba_or_the_kernels():
    code = "import sys, gate.api.app; print(sorted({'numba', 'kernels', 'llvmlite', 'gate.tools'} & set(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]", done.stdout


def test_the_installed_package_holds_no_test_fakes():
    names = {p.stem for p in (ROOT / "gate").rglob("*.py")}
    assert not names & {"loopback", "fake", "fakes"}, names & {"loopback", "fake", "fakes"}


def test_the_subject_imports_alone_and_none_of_the_meter():
    """``kernels`` is what a pull request is judged on; the meter (``gate.meter``, ``benchmarks``) measures it
    from the base commit, so the subject must load without it (import-linter holds the static line too)."""
    code = (
        "import sys, kernels, kernels.sim.collector, kernels.tasks.g1_walk.assembled, kernels.tasks.g1_motion.handwritten\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('gate', 'benchmarks')))"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]", done.stdout
