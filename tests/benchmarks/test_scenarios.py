"""The scenario harness's changes still apply to the tree (each names text that must be there, once)."""

from pathlib import Path

import pytest

from benchmarks import scenarios

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("name", list(scenarios.SCENARIOS))
def test_every_scenario_changes_text_that_is_in_its_file_once(name):
    s = scenarios.SCENARIOS[name]
    text = (ROOT / s.path).read_text()
    assert s.old == "" or text.count(s.old) == 1, f"{name}: update the scenario to the current {s.path}"
    assert s.expected in ("approve", "reject") and s.new not in text
