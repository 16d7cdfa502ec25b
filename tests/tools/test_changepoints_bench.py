"""``python -m tools changepoints-bench``: the change-point methods scored on injected steps in A/A noise."""

from __future__ import annotations

import json

import numpy as np

from gate.stats import changepoints
from tests.gate import gitrepo
from tests.gate.builders import measure_results
from tools import changepoints_bench, cli


def test_the_comparison_scores_every_method():
    noise = np.random.default_rng(0).normal(0, 0.02, 200)
    rows = changepoints_bench.compare_methods(noise, series=9, length=30, sizes=(0.2,))
    assert [r["method"] for r in rows] == list(changepoints.METHODS)
    chosen = next(r for r in rows if r["method"] == changepoints.CHOSEN)
    assert chosen["recall"] > 0.8 and chosen["false_per_100"] < 5


def test_changepoints_bench_scores_methods_on_an_aa_pair(tmp_path, monkeypatch, capsys):
    repo = tmp_path / "repo"
    a = gitrepo.commit(repo, policy="")
    b = gitrepo.commit(repo, message="A/A")  # an empty commit: the same tree
    c = gitrepo.commit(repo, policy="margin = 0.1\n", message="another tree")
    measure_results(tmp_path / "r", a, seed=1)
    results = measure_results(tmp_path / "r", b, seed=2)
    monkeypatch.setenv("FUSEGATE_REPO", str(repo))
    args = ["changepoints-bench", "--results", str(results), "--series", "6", "--length", "30"]
    assert cli.main([*args, "--base", a, "--head", b, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["cells"] > 10 and {r["method"] for r in out["rows"]} >= {
        "asv Potts exact (l1)",
        "asv step_detect",
    }
    assert cli.main([*args, "--base", a, "--head", c]) == 64
    assert "not the same tree" in capsys.readouterr().err
