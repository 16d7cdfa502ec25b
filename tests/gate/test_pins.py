"""A head that changes the dependency pins: which changes count, the environment of its pins (the commands that
make it, a pin that does not install), its lockstep worker's interpreter, and the rows that say what it ran with."""

from __future__ import annotations

import os
import sys
from importlib import metadata
from pathlib import Path

import pytest

from gate import provenance
from gate.cli import exits
from gate.cli.measure import Side, _asv_env
from gate.meter.duet import Duet
from gate.runner import envs, trees
from tests.gate.builders import POLICY, commit_files, evaluate_pair, ingest, measure_results
from tests.gate.gitrepo import git

ROOT = Path(__file__).resolve().parents[2]


def _pyproject(*deps: str, extra: str = "") -> str:
    listed = ", ".join(f'"{d}"' for d in deps)
    return f'[project]\nname = "x"\ndescription = "d"\ndependencies = [{listed}]\n{extra}'


BASE = _pyproject("numpy==2.4.6", "numba==0.68.1", "asv==0.6.6")


@pytest.mark.parametrize(
    ("head", "changed"),
    [
        (BASE, []),  # no change
        (_pyproject("numpy==2.4.5", "numba==0.68.1", "asv==0.6.6"), ["numpy 2.4.6 -> 2.4.5"]),  # a bump
        (
            _pyproject("numpy==2.4.6", "numba==0.68.1", "asv==0.6.6", "rich==15.0.0"),
            ["+rich==15.0.0"],
        ),  # added
        (_pyproject("numpy==2.4.6", "asv==0.6.6"), ["-numba==0.68.1"]),  # removed
        (_pyproject("asv==0.6.6", "numba==0.68.1", "numpy==2.4.6"), []),  # reordered
        (_pyproject("NumPy == 2.4.6", "numba==0.68.1", "asv==0.6.6"), []),  # spelled otherwise, the same pin
        (BASE.replace('"d"', '"other"') + "[tool.ruff]\nline-length = 100\n", []),  # outside dependencies
        (_pyproject("numpy>=2.4", "numba==0.68.1", "asv==0.6.6"), ["numpy==2.4.6 -> numpy>=2.4"]),
    ],
)
def test_only_a_change_of_the_dependency_list_counts(head, changed):
    found = provenance.pin_changes(BASE, head)
    assert [c.describe() for c in found] == changed
    if changed:  # the subject's id moves with the pins
        assert provenance.pins_id(BASE.encode()) != provenance.pins_id(head.encode())
    assert (envs.plan(Path("/r"), BASE, head) is None) == (not changed)


def test_the_environment_of_a_head_s_pins_is_its_dependencies_and_the_base_s_others(tmp_path):
    head = _pyproject("numpy==2.4.5", "numba==0.68.1", "scipy==1.17.1")
    env = envs.plan(tmp_path, BASE, head)
    # the head's pins, then what only the base names (asv, which runs the base's suites)
    assert env.requirements == ("numpy==2.4.5", "numba==0.68.1", "scipy==1.17.1", "asv==0.6.6")
    assert [c.describe() for c in env.changes] == ["-asv==0.6.6", "numpy 2.4.6 -> 2.4.5", "+scipy==1.17.1"]
    assert env.path.parent == tmp_path.resolve() / ".fusegate" / "envs"
    assert envs.plan(tmp_path, BASE, head.replace('"d"', '"e"')).path == env.path  # the same pins: reused
    assert envs.plan(tmp_path, BASE, head.replace("2.4.5", "2.4.4")).path != env.path
    make, install = env.commands()
    assert make == [sys.executable, "-m", "venv", "--clear", str(env.path)]  # from the base's interpreter
    assert install[:4] == [str(env.path / "bin" / "python"), "-m", "pip", "install"]
    assert install[-2:] == ["-r", str(env.path / envs.REQUIREMENTS)]
    os.environ["PYTHONPATH"] = "/some/tree"
    try:
        assert "PYTHONPATH" not in env.environ() and env.environ()["PIP_DISABLE_PIP_VERSION_CHECK"] == "1"
    finally:
        del os.environ["PYTHONPATH"]
    assert not env.ready()


def test_a_pin_that_does_not_install_is_an_error_naming_it_and_pips_words(tmp_path, monkeypatch):
    monkeypatch.setenv("PIP_NO_INDEX", "1")  # a real pip with nowhere to look: numpy 2.4.5 is not found
    monkeypatch.setenv("PIP_FIND_LINKS", str(tmp_path))
    env = envs.plan(tmp_path, BASE, _pyproject("numpy==2.4.5", "numba==0.68.1", "asv==0.6.6"))
    said = []
    with pytest.raises(envs.EnvError) as failed:
        envs.ensure(env, say=said.append)
    message = str(failed.value)
    assert "numpy==2.4.5" in message and "No matching distribution found for numpy==2.4.5" in message
    assert str(env.log) in message and "numpy==2.4.5" in env.log.read_text()
    assert not env.path.exists() and not env.ready()  # half made: made again next time
    assert said and "numpy 2.4.6 -> 2.4.5" in said[0]
    assert exits.of_error(failed.value) == exits.ERROR  # the gate could not judge: exit 3, no traceback


def test_the_head_side_runs_on_its_environment_and_the_base_s_worker_on_the_base_s(tmp_path):
    env = envs.plan(tmp_path, BASE, _pyproject("numpy==2.4.5", "numba==0.68.1", "asv==0.6.6"))
    base = Side("base", "b" * 40, tmp_path / "base", tmp_path / "r")
    head = Side("head", "h" * 40, tmp_path / "head", tmp_path / "r", against=base, env=env)
    assert base.python == sys.executable and head.python == str(env.path / "bin" / "python")
    found = _asv_env(head, tmp_path)
    assert found["FUSEGATE_BENCH_AGAINST_PYTHON"] == sys.executable
    assert found["FUSEGATE_BENCH_AGAINST"] == str(tmp_path / "base")


def test_each_lockstep_worker_starts_on_its_side_s_interpreter(tmp_path):
    other = tmp_path / "python-base"
    other.write_text(f'#!/bin/sh\necho "$@" > {tmp_path / "argv"}\nexec {sys.executable} "$@"\n')
    other.chmod(0o755)
    with Duet(ROOT, ROOT, pythons={"head": sys.executable, "base": str(other)}) as pair:
        assert pair.sides["head"].proc.args[0] == sys.executable
        assert pair.sides["base"].proc.args[0] == str(other)
    assert pair.sides["base"].proc.wait(10) == 0
    assert (tmp_path / "argv").read_text().split() == ["-m", "gate.meter.duet"]


def test_a_composite_tree_carries_the_head_s_pins(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    files = {"kernels/walk.py": "SPEED = 1\n", "gate/meter/bench.py": "PAIRS = 40\n", "pyproject.toml": BASE}
    base = commit_files(repo, files, "base")
    bumped = BASE.replace("2.4.6", "2.4.5")
    head = commit_files(repo, {"gate/meter/bench.py": "PAIRS = 1\n", "pyproject.toml": bumped}, "head")
    git(repo, "checkout", "-q", base)
    tree = trees.measurement_tree(repo, head, meter=base)
    assert tree.composite and (tree.path / "pyproject.toml").read_text() == bumped
    assert (tree.path / "gate/meter/bench.py").read_text() == "PAIRS = 40\n"
    assert tree.ids["subject"] == trees.ids(repo, head)["subject"] != trees.ids(repo, base)["subject"]
    # what the benchmark processes compute from the files: the kernels' ids move with the pins
    assert provenance.ids_on_disk(tree.path) == tree.ids


@pytest.fixture
def pinned_repo(tmp_path):
    path = tmp_path / "repo"
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    files = {
        "kernels/walk.py": "SPEED = 1\n",
        "gate/meter/bench.py": "PAIRS = 40\n",
        "fusegate-policy.toml": POLICY,
        "pyproject.toml": _pyproject("numpy==0.0.1", "numba==0.68.1"),
    }
    return path, commit_files(path, files, "base")


def _head_pinning(path, version):
    return commit_files(path, {"pyproject.toml": _pyproject(f"numpy=={version}", "numba==0.68.1")}, "bump")


def _meter_rows(store_url, tmp_path, path, base, head):
    ingest(store_url, measure_results(tmp_path / "a", base, provenance=trees.ids(path, base)))
    # results with this interpreter's software fingerprint (its numpy), as a benchmark process records them
    ingest(store_url, measure_results(tmp_path / "b", head, seed=1, provenance=trees.ids(path, head)))
    e = evaluate_pair(store_url, path, base, head)
    return e, [c for c in e.comparisons if c.kind == "meter"]


def test_a_head_whose_results_ran_with_its_pins_gets_a_row_naming_them(store_url, tmp_path, pinned_repo):
    path, base = pinned_repo
    installed = metadata.version("numpy")
    head = _head_pinning(path, installed)
    e, (row,) = _meter_rows(store_url, tmp_path, path, base, head)
    assert row.decision == "pass", row.reason
    assert f"numpy 0.0.1 -> {installed}" in row.reason and f"software: numpy {installed}" in row.reason
    assert any(c.kind == "head_vs_base" for c in e.comparisons)  # the head is still compared with the base


def test_a_head_whose_results_ran_without_its_pins_is_an_error(store_url, tmp_path, pinned_repo):
    path, base = pinned_repo
    head = _head_pinning(path, "0.0.2")
    e, (row,) = _meter_rows(store_url, tmp_path, path, base, head)
    installed = metadata.version("numpy")
    assert row.decision == "error" and f"numpy {installed} (pinned 0.0.2)" in row.reason
    assert "--measure" in row.reason and e.verdict == "error"
