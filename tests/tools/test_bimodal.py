"""The bimodality probe (python -m tools.bimodal) runs its arms in fresh processes and reports per mode."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_each_arm_runs_in_fresh_processes_and_is_reported(tmp_path):
    out = tmp_path / "rows.json"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "tools.bimodal",
            "--processes",
            "3",
            "--arms",
            "default,nohuge,relayout",
            "--num-envs",
            "256",
            "--samples",
            "6",
            "--layouts",
            "2",
            "--json",
            str(out),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    rows = json.loads(out.read_text())
    assert [r["arm"] for r in rows] == ["default", "nohuge", "relayout"]
    default, nohuge, relayout = rows
    assert default["median_s"] > 0 and default["cpu"] in (0, 1, *range(2, 1024))
    assert nohuge["huge_mib"] == 0  # NumPy asked for no huge pages
    assert len(relayout["layouts_ms"]) == len(relayout["first_again_ms"]) == 2
    assert "relayout: 1 processes" in done.stdout and "default" in done.stdout and "nohuge" in done.stdout
