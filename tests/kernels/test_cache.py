"""kernels._cache: each module's compiled kernels are keyed by the sources it imports, and nothing else."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import kernels
from kernels import _cache


@pytest.fixture
def tree(tmp_path, monkeypatch) -> Path:
    """A copy of the package that the key functions read instead of the real one (so edits stay local)."""
    root = tmp_path / "kernels"
    shutil.copytree(_cache.PACKAGE, root, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(_cache, "PACKAGE", root)
    _cache._closure.cache_clear()
    yield root
    _cache._closure.cache_clear()


def _edit(path: Path) -> None:
    path.write_text(path.read_text() + "\n# an edit\n")
    _cache._closure.cache_clear()


def test_a_hand_written_kernels_key_follows_its_imports_only(tree):
    walk, motion = (
        tree / "tasks" / "g1_walk" / "handwritten.py",
        tree / "tasks" / "g1_motion" / "handwritten.py",
    )
    before = {k: _cache.deps_key([k]) for k in (walk, motion)}
    for unrelated in (
        "sim/collector.py",
        "sim/getters.py",
        "sim/replay.py",
        "registry.py",
        "tasks/g1_walk/env.py",
        "tasks/g1_walk/generic.py",
        "tasks/g1_motion/meter.py",
    ):
        _edit(tree / unrelated)
        assert {k: _cache.deps_key([k]) for k in (walk, motion)} == before, unrelated

    _edit(tree / "geometry.py")  # the motion kernel's helpers, not the walk kernel's
    assert _cache.deps_key([walk]) == before[walk]
    assert _cache.deps_key([motion]) != before[motion]

    _edit(
        tree / "tasks" / "g1_walk" / "constants.py"
    )  # the walk layout (and the joint ranges the motion task copies)
    assert _cache.deps_key([walk]) != before[walk]


def test_the_closure_is_what_the_import_statements_name(tree):
    names = {
        p.relative_to(tree).as_posix() for p in _cache.closure(tree / "tasks" / "g1_walk" / "handwritten.py")
    }
    walk = {"handwritten.py", "constants.py", "plan.py", "__init__.py"}
    assert {f"tasks/g1_walk/{name}" for name in walk} | {"scalar.py"} <= names
    assert not any(name.startswith(("sim/", "tasks/g1_motion/")) for name in names), sorted(names)
    assert "geometry.py" not in names and "tasks/g1_walk/reference.py" not in names


def test_compiled_kernels_are_filed_under_their_own_key():
    from kernels.tasks.g1_motion import handwritten as g1_motion
    from kernels.tasks.g1_walk import handwritten as g1_walk

    for module in (g1_walk, g1_motion):
        path = Path(module.update_state_kernel._cache._cache_path)
        key = _cache.deps_key([Path(module.__file__)])[:16]
        assert path.name == f"{Path(module.__file__).stem}-{key}"
        assert path.is_relative_to(
            kernels.NUMBA_CACHE_DIR / "package" / "tasks" / Path(module.__file__).parent.name
        )


def test_a_generated_modules_file_is_keyed_by_what_it_imports(tree):
    from kernels.assembled import codegen

    source = (
        "from kernels.scalar import reduce_means\nfrom kernels.tasks.g1_walk.constants import QPOS_JOINTS\n"
    )
    generator = tree / "tasks" / "g1_walk" / "assembled.py"
    first = codegen.module_path("g1_walk", "ab" * 32, source, generator)
    _edit(tree / "tasks" / "g1_walk" / "env.py")
    assert codegen.module_path("g1_walk", "ab" * 32, source, generator) == first
    _edit(tree / "scalar.py")
    assert codegen.module_path("g1_walk", "ab" * 32, source, generator) != first
