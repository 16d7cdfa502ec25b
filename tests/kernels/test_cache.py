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
    walk, motion = tree / "handwritten" / "g1_walk.py", tree / "handwritten" / "g1_motion.py"
    before = {k: _cache.deps_key([k]) for k in (walk, motion)}
    for unrelated in (
        "sim/collector.py",
        "sim/getters.py",
        "sim/replay.py",
        "registry.py",
    ):
        _edit(tree / unrelated)
        assert {k: _cache.deps_key([k]) for k in (walk, motion)} == before, unrelated

    _edit(tree / "geometry.py")  # the motion kernel's helpers, not the walk kernel's
    assert _cache.deps_key([walk]) == before[walk]
    assert _cache.deps_key([motion]) != before[motion]

    _edit(tree / "tasks" / "g1_walk.py")  # the walk layout (and the joint ranges the motion task copies)
    assert _cache.deps_key([walk]) != before[walk]


def test_the_closure_is_what_the_import_statements_name(tree):
    names = {str(p.relative_to(tree)) for p in _cache.closure(tree / "handwritten" / "g1_walk.py")}
    assert {"handwritten/g1_walk.py", "tasks/g1_walk.py", "tasks/g1_walk_plan.py", "scalar.py"} <= names
    assert not any(name.startswith(("sim/", "reference/")) for name in names), sorted(names)
    assert "geometry.py" not in names and "tasks/g1_motion.py" not in names


def test_compiled_kernels_are_filed_under_their_own_key():
    from kernels.handwritten import g1_motion, g1_walk

    for module in (g1_walk, g1_motion):
        path = Path(module.update_state_kernel._cache._cache_path)
        key = _cache.deps_key([Path(module.__file__)])[:16]
        assert path.name == f"{Path(module.__file__).stem}-{key}"
        assert path.is_relative_to(kernels.NUMBA_CACHE_DIR / "package" / "handwritten")


def test_a_generated_modules_file_is_keyed_by_what_it_imports(tree):
    from kernels.assembled import codegen

    source = "from kernels.scalar import reduce_means\nfrom kernels.tasks.g1_walk import QPOS_JOINTS\n"
    generator = tree / "assembled" / "g1_walk.py"
    first = codegen.module_path("g1_walk", "ab" * 32, source, generator)
    _edit(tree / "sim" / "walk.py")
    assert codegen.module_path("g1_walk", "ab" * 32, source, generator) == first
    _edit(tree / "scalar.py")
    assert codegen.module_path("g1_walk", "ab" * 32, source, generator) != first
