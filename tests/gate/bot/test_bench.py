"""The bot's latency bench (``python -m tests.gate.bot.bench``) runs the whole path and reports the latency it saw."""

from __future__ import annotations

import json

import pytest

from tests.gate import gitrepo
from tests.gate.bot import bench
from tests.gate.bot.conftest import POLICY
from tests.gate.builders import measure_results


@pytest.mark.slow
def test_bot_bench_times_results_to_status(tmp_path, monkeypatch, capsys):
    repo = tmp_path / "repo"
    base = gitrepo.commit(repo, policy=POLICY, message="base")
    head = gitrepo.commit(repo, message="head")
    measure_results(tmp_path / "r", base, seed=1)
    results = measure_results(tmp_path / "r", head, seed=2)
    monkeypatch.setenv("FUSEGATE_REPO", str(repo))
    args = ["--results", str(results), "--base", base, "--head", head, "--repeats", "2"]
    assert bench.main([*args, "--json"]) == 0
    row = json.loads(capsys.readouterr().out)
    assert row["repeats"] == 2 and len(row["samples_s"]) == 2 and row["head"] == head
    assert row["states"] == ["success (approve)"]
    assert 0 < row["latency_median_s"] <= row["latency_max_s"]
    assert (
        bench.main([*args[:-2], "--repeats", "1", "--head", base]) == 2
    )  # base == head: no results of "both"
