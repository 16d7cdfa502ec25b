"""Measurement trees (``gate.runner.trees``): the head's subject with the base's meter, and the ids of each."""

from __future__ import annotations

import json
from pathlib import Path

from gate import provenance, subject
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


def test_the_code_that_computes_the_ids_is_meter_and_the_bases(tmp_path):
    """The benchmark processes compute the ids with ``gate/provenance.py`` and ``gate/provenance_kernels.py``:
    a head that edits them changes the meter, and is measured with the base's."""
    repo, base = _repo(tmp_path)
    files = ("gate/provenance.py", "gate/provenance_kernels.py")
    base = commit_files(repo, {f: "ID = 1\n" for f in files}, "ids")
    head = commit_files(repo, {f: "ID = 2\n" for f in files}, "head")
    git(repo, "checkout", "-q", base)
    tree = trees.measurement_tree(repo, head, meter=base)
    assert tree.composite and set(tree.meter_changes) == set(files)
    assert all((tree.path / f).read_text() == "ID = 1\n" for f in files)
    assert tree.ids["meter"] == trees.ids(repo, base)["meter"] != trees.ids(repo, head)["meter"]


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


TABLE = """
[tool.fusegate]
version = 1
tasks = "team.tasks"
baseline = "fast"
[tool.fusegate.grid]
quick = { scales = [64], paired = [] }
full = { scales = [64, 128], paired = [] }
"""


def _declared(tmp_path: Path) -> tuple[Path, str]:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    base = commit_files(
        repo,
        {
            "team/tasks/walk/__init__.py": 'TASK = TaskSpec(implementations={"fast": ".fast:Fast"})\n',
            "team/tasks/walk/fast.py": "SPEED = 1\n",
            "team/tasks/walk/meter.py": "ATOL = 1e-5\n",
            "kernels/walk.py": "NOT_THE_SUBJECT = 1\n",
            "gate/meter/bench.py": "PAIRS = 40\n",
            "pyproject.toml": '[project]\nname = "x"\ndependencies = ["numpy==2.4.6"]\n' + TABLE,
        },
        "base",
    )
    return repo, base


def test_the_subject_is_the_base_declarations_and_each_tasks_meter_file_the_bases(tmp_path):
    """The declared directories are the head's in the tree, each task's meter.py there is the base's, a task the
    head adds brings no meter.py of its own, and a directory the base does not declare is the base's."""
    repo, base = _declared(tmp_path)
    head = commit_files(
        repo,
        {
            "team/tasks/walk/fast.py": "SPEED = 2\n",
            "team/tasks/walk/meter.py": "ATOL = 1.0\n",
            "team/tasks/run/__init__.py": "TASK = None\n",
            "team/tasks/run/meter.py": "ATOL = 1.0\n",
            "kernels/walk.py": "NOT_THE_SUBJECT = 2\n",
        },
        "head",
    )
    tree = trees.measurement_tree(repo, head, meter=base)
    p = tree.path
    assert tree.composite and (p / "team/tasks/walk/fast.py").read_text() == "SPEED = 2\n"
    assert (p / "team/tasks/walk/meter.py").read_text() == "ATOL = 1e-5\n"
    assert (p / "team/tasks/run/__init__.py").exists() and not (p / "team/tasks/run/meter.py").exists()
    assert (p / "kernels/walk.py").read_text() == "NOT_THE_SUBJECT = 1\n"
    assert set(tree.meter_changes) == {"team/tasks/walk/meter.py", "team/tasks/run/meter.py"}
    assert tree.ids["meter"] == trees.ids(repo, base)["meter"]
    assert provenance.ids_on_disk(p) == tree.ids


def test_a_head_that_edits_its_declaration_is_measured_as_the_base_declares(tmp_path):
    """The table is the meter's: a head that moves its subject or its grid changes its meter, and its tree reads
    the base's declaration (a fusegate.toml of it, which wins over the head's pyproject.toml)."""
    repo, base = _declared(tmp_path)
    pyproject = (repo / "pyproject.toml").read_text()
    edited = pyproject.replace('tasks = "team.tasks"', 'tasks = "kernels.tasks"').replace("[64]", "[8]")
    head = commit_files(repo, {"pyproject.toml": edited.replace("2.4.6", "2.4.5")}, "head")
    assert trees.ids(repo, head)["meter"] != trees.ids(repo, base)["meter"]
    tree = trees.measurement_tree(repo, head, meter=base)
    assert tree.composite and provenance.TABLE in tree.meter_changes
    assert "2.4.5" in (tree.path / "pyproject.toml").read_text()  # the head's pins
    read = subject.read(tree.path)
    assert (read.tasks, read.profile("quick").scales) == ("team.tasks", (64,))
    assert read.table() == subject.from_texts(pyproject, None).table()
    assert tree.ids["meter"] == trees.ids(repo, base)["meter"] == provenance.ids_on_disk(tree.path)["meter"]
    assert (tree.path / "team/tasks/walk/fast.py").exists()  # the base's subject directories
