"""``python -m tools profile-time``: where an asv run's time went, or what to run first."""

from __future__ import annotations

import json

from tests.gate import gitrepo
from tools import cli

COLUMNS = ["result", "params", "version", "started_at", "duration"]


def test_profile_time_command_prints_the_table_or_says_what_to_run(tmp_path, monkeypatch, capsys):
    repo = tmp_path / "repo"
    head = gitrepo.commit(repo)
    monkeypatch.setenv("FUSEGATE_REPO", str(repo))
    assert cli.main(["profile-time", "--results", str(tmp_path / "none")]) == 64
    assert "benchmark it first" in capsys.readouterr().err
    results = tmp_path / "results"
    (results / "m1").mkdir(parents=True)
    data = {"result_columns": COLUMNS, "results": {"hot_slice.Paired.track_ratio": [None, [], "v", 0, 8.0]}}
    (results / "m1" / f"{head[:8]}-existing-py.json").write_text(json.dumps(data))
    assert cli.main(["profile-time", "--results", str(results), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows == [{"name": "hot_slice.Paired", "wall_s": 8.0, "processes": 0, "parts": {}}]
