"""``fusegate threads``: the best thread count per scale from stored timings, and the table it writes."""

from __future__ import annotations

import json

from gate import cli
from gate.store import db
from tests.gate import gitrepo
from tests.gate.builders import POLICY, ingest, measure_results


def test_best_threads_per_scale_and_the_kernels_table(tmp_path, monkeypatch, capsys):
    commit = gitrepo.commit(tmp_path / "repo", policy=POLICY)
    url = f"sqlite:///{tmp_path / 'store.db'}"
    db.upgrade(url)

    # 2 threads are faster than 1 except for the reference and the assembled kernel at 4096 envs
    def slow(c):
        if c["threads"] == 1:
            return 1.0
        return 1.4 if (c["impl"], c["num_envs"]) == ("assembled", 4096) else 0.6

    ingest(url, measure_results(tmp_path / "m", commit, slow=slow))
    monkeypatch.setenv("FUSEGATE_REPO", str(tmp_path / "repo"))
    assert cli.main(["threads", "--commit", commit, "--db", url, "--json"]) == 0
    rows = {(r["task"], r["impl"], r["num_envs"]): r for r in json.loads(capsys.readouterr().out)}
    assert (
        rows[("g1_walk", "assembled", 4096)]["threads"] == 1
        and rows[("g1_walk", "assembled", 32768)]["threads"] == 2
    )
    assert rows[("g1_motion", "handwritten", 4096)]["threads"] == 2
    table = tmp_path / "threads.json"
    assert cli.main(["threads", "--commit", commit, "--db", url, "--write", str(table)]) == 0
    saved = json.loads(table.read_text())
    assert saved["format"] == 1 and saved["from"] == "runner-1" and saved["machine"].endswith(" x2")
    assert saved["table"]["g1_walk"]["assembled"] == {"4096": 1, "32768": 2}
    empty = gitrepo.commit(tmp_path / "repo")
    assert cli.main(["threads", "--commit", empty, "--db", url]) == 64
    assert "no hot-slice timings" in capsys.readouterr().err
