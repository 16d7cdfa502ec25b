"""A tree without an asv.conf.json of its own (a team's repository) is measured by the running fusegate: its
asv configuration is generated into the tree's ``.fusegate/``, and its processes import the tree, then fusegate."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from gate import provenance
from gate.runner import asvrun

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
