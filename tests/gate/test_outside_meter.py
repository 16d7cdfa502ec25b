"""A tree without an asv.conf.json of its own (a team's repository) is measured by the running fusegate: its
asv configuration is generated into the tree's ``.fusegate/``, and its processes import the tree, then fusegate."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from gate import lineage, provenance
from gate.runner import asvrun, envs
from tests.gate.builders import commit_files
from tests.gate.gitrepo import git

ROOT = Path(__file__).resolve().parents[2]
TEAM = ROOT / "tests" / "fixtures" / "teamrepo"


def _team_tree(tmp_path: Path) -> Path:
    tree = tmp_path / "team"
    shutil.copytree(TEAM, tree, ignore=shutil.ignore_patterns("__pycache__"))
    return tree


def test_a_team_tree_gets_the_running_fusegates_suites_and_keeps_its_own_project_and_results(tmp_path):
    tree = _team_tree(tmp_path)
    results = tree / ".asv" / "results"
    path = asvrun.outside_config(tree, results)
    assert path == tree.resolve() / asvrun.OUTSIDE_CONFIG
    conf = json.loads(path.read_text())
    ours = json.loads((ROOT / "asv.conf.json").read_text())
    assert conf["benchmark_dir"] == str(ROOT / "benchmarks")
    assert (conf["project"], conf["repo"], conf["results_dir"]) == (
        "teamkernels",
        str(tree.resolve()),
        str(results.resolve()),
    )
    assert conf["env_dir"].startswith(str(tree.resolve()))
    # the meter's own settings: how asv launches and times the suites
    for key in ("launch_method", "default_benchmark_timeout", "version"):
        assert conf[key] == ours[key]
    mtime = path.stat().st_mtime_ns
    assert asvrun.outside_config(tree, results) == path and path.stat().st_mtime_ns == mtime  # unchanged


def test_this_repositorys_trees_keep_their_own_configuration_and_import_only_themselves(tmp_path):
    assert asvrun.outside_config(ROOT, ROOT / ".asv" / "results") is None
    assert provenance.holds_meter(ROOT)
    assert provenance.import_path(ROOT) == [str(ROOT)]


def test_a_team_trees_processes_import_the_tree_first_then_the_running_fusegate(tmp_path):
    tree = _team_tree(tmp_path)
    assert not provenance.holds_meter(tree)
    assert provenance.import_path(tree) == [str(tree.resolve()), str(provenance.meter_root())]
    assert provenance.meter_root() == ROOT


PINNED = '[project]\nname = "team"\ndependencies = ["{pin}", "numpy==2.4.6"]\n'


def test_a_teams_fusegate_pin_is_meter_not_subject():
    one, two = PINNED.format(pin="fusegate==0.1.0"), PINNED.format(pin="fusegate==0.2.0")
    files = [("teamtasks/cartpole_balance/fused.py", "a" * 40)]
    a, b = provenance.of_commit(files, one), provenance.of_commit(files, two)
    assert a["subject"] == b["subject"] and a["meter"] != b["meter"]
    assert provenance.pin_changes(one, two) == ()  # no environment of the head's pins for it
    assert provenance.meter_pin_changes(one, two) == ("pyproject.toml (fusegate==0.1.0 -> fusegate==0.2.0)",)
    assert provenance.meter_pin_changes(one, one.replace("==", " == ")) == ()
    # this repository is fusegate and pins none: its ids are what they were
    ours = (ROOT / "pyproject.toml").read_text()
    assert provenance.meter_pin(ours) is None
    assert provenance.ids(files, ours.encode()) == provenance.ids(files, ours.encode(), pin="fusegate==9")


def test_a_team_tree_on_disk_records_the_running_fusegate_as_its_meter(tmp_path, monkeypatch):
    tree = _team_tree(tmp_path)
    pyproject = (tree / "pyproject.toml").read_text()
    files = [
        (p.relative_to(tree).as_posix(), provenance.blob_id(p.read_bytes()))
        for p in tree.rglob("*")
        if p.is_file()
    ]
    assert provenance.ids_on_disk(tree) == provenance.of_commit(files, pyproject)  # the version it pins runs
    monkeypatch.setattr(provenance, "running_pin", lambda: "fusegate==0.9.9")
    assert provenance.ids_on_disk(tree)["meter"] != provenance.of_commit(files, pyproject)["meter"]


def test_measuring_with_a_base_that_pins_another_fusegate_is_refused_saying_what_to_install(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    ours = commit_files(repo, {"pyproject.toml": PINNED.format(pin=provenance.running_pin())}, "ours")
    asvrun.check_meter(repo, ours)
    other = commit_files(repo, {"pyproject.toml": PINNED.format(pin="fusegate==0.0.1")}, "another")
    with pytest.raises(ValueError, match=r"pip install 'fusegate==0.0.1'"):
        asvrun.check_meter(repo, other)
    # a head that pins another fusegate changes the meter: the lineage lists it with the meter's files
    found = lineage.of(repo, ours, other)
    assert found.meter_changes == (f"pyproject.toml ({provenance.running_pin()} -> fusegate==0.0.1)",)
    assert found.same_subject and found.pin_changes == ()
    asvrun.check_meter(ROOT, "HEAD")  # this repository pins no fusegate: its own tree is its meter


def test_a_teams_pins_environment_has_the_running_fusegates_dependencies_not_the_fusegate_pin():
    base = PINNED.format(pin="fusegate==0.1.0")
    head = base.replace("numpy==2.4.6", "numpy==2.4.5")
    reqs = envs.requirements(base, head)
    assert "numpy==2.4.5" in reqs and "numpy==2.4.6" not in reqs
    assert not any(r.startswith("fusegate") for r in reqs)
    assert {"numba==0.68.1", "asv==0.6.6"} <= set(reqs)  # what the running fusegate's meter imports


def test_an_asv_call_whose_patterns_select_nothing_of_a_subject_is_nothing_to_run(tmp_path):
    """A task without a collector env or a paired implementation has no benchmark of those calls: asv says so and
    exits 1, which is not a failure of the measurement; any other exit 1 is."""
    import sys

    script = tmp_path / "fake_asv.py"
    script.write_text("import sys\nprint('· Discovering benchmarks')\nprint(sys.argv[1])\nsys.exit(1)\n")
    for said, code in (("· No benchmarks selected", 0), ("· Some other failure", 1)):
        got = asvrun.run(
            [sys.executable, str(script), said],
            env={},
            log=tmp_path / "asv.log",
            estimate=asvrun.Estimate([asvrun.Call({})]),
            say=lambda line: None,
            status=lambda line: None,
        )
        assert got == code, said
