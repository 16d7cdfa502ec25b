"""Paired-ratio summaries from the asv sidecar: estimate, hierarchical CI, errors naming file and line."""

import json

import numpy as np
import pytest

from gate import cli
from gate.runner import pairs


def _write(directory, commit, processes):
    path = directory / commit[:8] / "paired.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as f:
        for ratios in processes:
            record = {
                "commit": commit,
                "task": "g1_walk",
                "impl": "assembled",
                "num_envs": 4096,
                "threads": 2,
                "pairs": [{"base_s": 1.0, "impl_s": float(r)} for r in ratios],
            }
            f.write(json.dumps(record) + "\n")


def test_exact_ratios_give_a_point_interval(tmp_path):
    _write(tmp_path, "a" * 40, [np.full(40, 1.1), np.full(40, 1.1)])
    (row,) = pairs.summarize(tmp_path)
    assert row["processes"] == 2 and row["pairs"] == 80
    assert row["median_ratio"] == pytest.approx(1.1)
    assert row["ci_low"] == pytest.approx(1.1) and row["ci_high"] == pytest.approx(1.1)


def test_interval_covers_a_real_slowdown_and_widens_with_process_drift(tmp_path):
    rng = np.random.default_rng(1)
    steady = [1.05 * np.exp(rng.normal(0, 0.05, 40)) for _ in range(4)]
    _write(tmp_path / "steady", "b" * 40, steady)
    drifting = [s * f for s, f in zip(steady, (0.95, 1.0, 1.05, 1.1), strict=True)]
    _write(tmp_path / "drift", "c" * 40, drifting)
    (a,) = pairs.summarize(tmp_path / "steady")
    (b,) = pairs.summarize(tmp_path / "drift")
    assert a["ci_low"] < 1.05 < a["ci_high"] and a["ci_low"] > 1.0
    assert b["ci_width_pct"] > a["ci_width_pct"]


def test_malformed_record_names_file_and_line(tmp_path):
    _write(tmp_path, "d" * 40, [np.ones(3)])
    with open(tmp_path / "dddddddd" / "paired.jsonl", "a") as f:
        f.write('{"commit": "x"}\n')
    with pytest.raises(ValueError, match=r"dddddddd/paired.jsonl:2: not a paired record"):
        pairs.summarize(tmp_path)


def test_cli(tmp_path, capsys):
    _write(tmp_path, "e" * 40, [np.full(5, 0.9)])
    assert cli.main(["pairs", str(tmp_path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["median_ratio"] == pytest.approx(0.9)
    assert cli.main(["pairs", str(tmp_path / "missing")]) == 64
    assert "no sidecar directory" in capsys.readouterr().err
