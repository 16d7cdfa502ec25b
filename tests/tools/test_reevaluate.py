"""``python -m tools reevaluate``: every stored pair judged again equals what was stored; a changed rule shows."""

from __future__ import annotations

import json

from gate.evaluate import tally
from gate.store import db
from tests.gate import gitrepo
from tests.gate.builders import POLICY, evaluate_pair, ingest, measure_results
from tools import cli, reevaluate


def test_reevaluating_the_store_gives_the_stored_rows_and_names_a_change(
    store_url, tmp_path, monkeypatch, capsys
):
    path, base, head = gitrepo.base_and_head(tmp_path / "repo", policy=POLICY)
    ingest(store_url, measure_results(tmp_path / "a", base, seed=1))
    ingest(
        store_url,
        measure_results(tmp_path / "b", head, seed=2, slow=lambda c: 1.3 if c["impl"] == "numpy" else 1.0),
    )
    stored = evaluate_pair(store_url, path, base, head)
    with db.transaction(store_url, write=False) as session:
        before = reevaluate.judged(session, repo=path)
    [pair] = before
    assert (pair["base"], pair["head"], pair["verdict"]) == (base, head, stored.verdict)
    assert [(r["kind"], r["decision"], r["ratio"]) for r in pair["rows"]] == [
        (c.kind, c.decision, c.ratio) for c in stored.comparisons
    ]
    assert reevaluate.differences(before, before) == []
    monkeypatch.setattr(tally, "MOMENTS", "another note")  # a rule's text changes: the tool says where
    with db.transaction(store_url, write=False) as session:
        after = reevaluate.judged(session, repo=path)
    found = reevaluate.differences(before, after)
    assert found and all(f.startswith(f"{base[:12]} -> {head[:12]}") for f in found)

    # the command: --json now, then --against it (0 differences, exit 0) and against the earlier rule (exit 1)
    monkeypatch.setenv("FUSEGATE_REPO", str(path))
    assert cli.main(["reevaluate", "--db", store_url, "--json"]) == 0
    earlier = tmp_path / "earlier.json"
    earlier.write_text(capsys.readouterr().out)
    assert cli.main(["reevaluate", "--db", store_url, "--against", str(earlier)]) == 0
    assert capsys.readouterr().out.strip().endswith(": 0 difference(s)")
    earlier.write_text(json.dumps(before))
    assert cli.main(["reevaluate", "--db", store_url, "--against", str(earlier)]) == 1
