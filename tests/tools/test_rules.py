"""``python -m tools rules``: asv's rule and the gate's on the same stored samples, with slowdowns injected."""

from __future__ import annotations

import json

import pytest

from gate.policy import Policy
from gate.services.calibration import calibrate
from gate.store import db
from tests.gate import gitrepo
from tests.gate.builders import POLICY, costs_of, ingest, measure_results
from tools import cli, rules


@pytest.fixture
def repo(tmp_path):
    return gitrepo.base_and_head(tmp_path / "repo", policy=POLICY)


def test_rules_table_compares_asv_and_the_gate_on_injected_slowdowns(
    store_url, tmp_path, repo, monkeypatch, capsys
):
    path, base, head = repo
    ingest(store_url, measure_results(tmp_path / "a", base, seed=1))
    ingest(store_url, measure_results(tmp_path / "b", head, seed=2))
    monkeypatch.setenv("FUSEGATE_REPO", str(path))
    argv = ["rules", "--base", base, "--head", head, "--inject", "1,1.3", "--db", store_url, "--json"]
    assert cli.main(argv) == 0
    same, slow = json.loads(capsys.readouterr().out)
    assert same["cells"] == slow["cells"] == 28
    assert same["asv_worse"] == 0 and same["gate_fail"] == 0  # 2% noise, nothing changed
    assert slow["asv_worse"] == 28 and slow["gate_fail"] == 28  # 30% slower everywhere: both see it


def test_rules_compare_cost_against_the_calibrated_cost_floor(store_url, tmp_path, repo):
    path, _, head = repo
    aa = gitrepo.commit(path, message="A/A: same tree as head")
    jitter = {"numpy": 1.0006, "handwritten": 0.9998, "assembled": 1.0, "assembled_generic": 1.0001}
    ingest(store_url, measure_results(tmp_path / "a", head, costs=costs_of()))
    ingest(
        store_url, measure_results(tmp_path / "b", aa, costs=costs_of(lambda c: jitter[c["impl"]]), seed=1)
    )
    with db.transaction(store_url) as session:
        calibrate(session, base_sha=head, head_sha=aa)
        table = rules.compare(
            session, base_sha=head, head_sha=aa, policy=Policy(), injections=[1.0, 1.03, 1.2]
        )
    by = {r["injected"]: r for r in table}
    assert all(r["cost_cells"] == 16 for r in table)
    assert by[1.0]["gate_cost_fail"] == 0 and by[1.03]["gate_cost_fail"] == 16
    assert by[1.03]["asv_cost_worse"] == 0 and by[1.2]["asv_cost_worse"] == 16  # asv's factor 1.1 misses 3%
