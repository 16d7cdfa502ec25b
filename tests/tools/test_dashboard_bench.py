"""``python -m tools dashboard-bench`` runs end to end on a small store."""

from __future__ import annotations

import json

import pytest

from gate.cli import exits
from tests.gate import gitrepo
from tools import cli


@pytest.mark.slow
def test_dashboard_bench_fills_and_times_every_page(tmp_path, monkeypatch, capsys):
    repo = tmp_path / "repo"
    gitrepo.commit(repo, policy='compare = ["assembled"]\n')
    monkeypatch.setenv("FUSEGATE_REPO", str(repo))
    url = f"sqlite:///{tmp_path / 'big.db'}"
    args = ["dashboard-bench", "--results", "3000", "--repeats", "3", "--db", url, "--json"]
    assert cli.main(args) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["results_in_store"] >= 3000
    assert len(out["pages"]) == 12 and all(0 < p["median_ms"] <= p["max_ms"] for p in out["pages"])
    assert (
        cli.main([*args[:2], "9000", *args[3:]]) == exits.USAGE
    )  # a store with fewer results is not refilled
