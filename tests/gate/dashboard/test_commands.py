"""``fusegate dev dashboard-bench`` and ``fusegate dev changepoints-bench`` run end to end on small inputs."""

from __future__ import annotations

import json

import pytest

from gate import cli
from gate.cli import exits
from tests.gate import gitrepo
from tests.gate.builders import measure_results


@pytest.mark.slow
def test_dashboard_bench_fills_and_times_every_page(tmp_path, monkeypatch, capsys):
    repo = tmp_path / "repo"
    gitrepo.commit(repo, policy='compare = ["assembled"]\n')
    monkeypatch.setenv("FUSEGATE_REPO", str(repo))
    url = f"sqlite:///{tmp_path / 'big.db'}"
    args = ["dev", "dashboard-bench", "--results", "3000", "--repeats", "3", "--db", url, "--json"]
    assert cli.main(args) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["results_in_store"] >= 3000
    assert len(out["pages"]) == 12 and all(0 < p["median_ms"] <= p["max_ms"] for p in out["pages"])
    assert (
        cli.main([*args[:3], "9000", *args[4:]]) == exits.USAGE
    )  # a store with fewer results is not refilled


def test_changepoints_bench_scores_methods_on_an_aa_pair(tmp_path, monkeypatch, capsys):
    repo = tmp_path / "repo"
    a = gitrepo.commit(repo, policy="")
    b = gitrepo.commit(repo, message="A/A")  # an empty commit: the same tree
    c = gitrepo.commit(repo, policy="margin = 0.1\n", message="another tree")
    measure_results(tmp_path / "r", a, seed=1)
    results = measure_results(tmp_path / "r", b, seed=2)
    monkeypatch.setenv("FUSEGATE_REPO", str(repo))
    args = ["dev", "changepoints-bench", "--results", str(results), "--series", "6", "--length", "30"]
    assert cli.main([*args, "--base", a, "--head", b, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["cells"] > 10 and {r["method"] for r in out["rows"]} >= {
        "asv Potts exact (l1)",
        "asv step_detect",
    }
    assert cli.main([*args, "--base", a, "--head", c]) == 64
    assert "not the same tree" in capsys.readouterr().err
