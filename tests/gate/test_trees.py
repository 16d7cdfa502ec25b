"""Measurement trees (``gate.runner.trees``): the head's subject with the base's meter, and the ids of each."""

from __future__ import annotations

import json
from pathlib import Path

from gate import provenance
from gate.runner import trees
from tests.gate.builders import commit_files
from tests.gate.gitrepo import git


def _repo(tmp_path: Path) -> tuple[Path, str]:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    base = commit_files(
        repo,
        {
            "kernels/walk.py": "SPEED = 1\n",
            "kernels/reference/tolerance.py": "ATOL = 1e-5\n",
            "gate/meter/bench.py": "PAIRS = 40\n",
            "benchmarks/hot_slice.py": "ROUNDS = 6\n",
            "README.md": "docs\n",
            "pyproject.toml": '[project]\nname = "x"\ndependencies = ["numpy==2.4.6"]\n',
        },
        "base",
    )
    return repo, base


def test_a_head_that_edits_kernels_and_meter_is_measured_with_the_base_meter(tmp_path):
    repo, base = _repo(tmp_path)
    head = commit_files(
        repo,
        {
            "kernels/walk.py": "SPEED = 2\n",
            "kernels/extra.py": "NEW = 1\n",
            "kernels/reference/tolerance.py": "ATOL = 1.0\n",  # loosened: the base's stays in force
            "gate/meter/bench.py": "PAIRS = 1\n",
            "benchmarks/hot_slice.py": None,
        },
        "head",
    )
    git(repo, "checkout", "-q", base)
    tree = trees.measurement_tree(repo, head, meter=base)
    assert tree.composite and tree.commit == head and tree.meter_commit == base
    p = tree.path
    assert (p / "kernels/walk.py").read_text() == "SPEED = 2\n" and (p / "kernels/extra.py").exists()
    assert (p / "kernels/reference/tolerance.py").read_text() == "ATOL = 1e-5\n"
    assert (p / "gate/meter/bench.py").read_text() == "PAIRS = 40\n"
    assert (p / "benchmarks/hot_slice.py").read_text() == "ROUNDS = 6\n"
    assert set(tree.meter_changes) == {
        "kernels/reference/tolerance.py",
        "gate/meter/bench.py",
        "benchmarks/hot_slice.py",
    }
    base_ids, head_ids = trees.ids(repo, base), trees.ids(repo, head)
    assert tree.ids["meter"] == base_ids["meter"] != head_ids["meter"]
    assert tree.ids["subject"] == head_ids["subject"] != base_ids["subject"]
    assert provenance.ids_on_disk(p) == tree.ids  # what the benchmark processes compute, from the files
    manifest = json.loads((p / provenance.MANIFEST).read_text())
    assert manifest["meter_commit"] == base and manifest["commit"] == head
    again = trees.measurement_tree(repo, head, meter=base)  # reused, not made again
    assert again.path == p and again.ids == tree.ids


def test_a_head_that_leaves_the_meter_alone_is_measured_in_its_own_tree(tmp_path):
    repo, base = _repo(tmp_path)
    head = commit_files(repo, {"kernels/walk.py": "SPEED = 3\n", "README.md": "more docs\n"}, "head")
    tree = trees.measurement_tree(repo, head, meter=base)
    assert not tree.composite or tree.ids["meter"] == trees.ids(repo, base)["meter"]
    assert tree.path == repo  # the checked-out HEAD itself
    assert trees.meter_changes(repo, base, head) == ()


def test_docs_and_tool_settings_are_neither_side_but_dependency_pins_are_the_subject(tmp_path):
    repo, base = _repo(tmp_path)
    docs = commit_files(repo, {"README.md": "other\n"}, "docs")
    assert trees.ids(repo, docs) == trees.ids(repo, base)
    pyproject = (repo / "pyproject.toml").read_text()
    lint = commit_files(repo, {"pyproject.toml": pyproject + "[tool.ruff]\nline-length = 100\n"}, "lint")
    assert trees.ids(repo, lint) == trees.ids(repo, base)
    pins = commit_files(repo, {"pyproject.toml": pyproject.replace("2.4.6", "2.5.0")}, "pins")
    assert trees.ids(repo, pins)["subject"] != trees.ids(repo, base)["subject"]
    assert trees.ids(repo, pins)["meter"] == trees.ids(repo, base)["meter"]
