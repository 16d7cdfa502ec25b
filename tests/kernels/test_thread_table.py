"""The kernels' thread count from this machine's measured table (``fusegate threads --write``), else the rule."""

from __future__ import annotations

import json
import subprocess
import sys

import kernels
from kernels import kernel as kernel_mod


def _threads(env: dict, task: str, impl: str, n: int) -> int:
    code = f"import kernels; print(kernels.load({task!r}, {impl!r}, num_envs={n}).threads)"
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    return int(done.stdout)


def test_a_table_of_this_machine_sets_the_threads_and_another_machines_does_not(tmp_path, monkeypatch):
    import os

    table = tmp_path / "threads.json"
    mine = {
        "format": 1,
        "machine": kernel_mod.machine_key(),
        "table": {"g1_walk": {"handwritten": {"64": 1, "4096": 2}}},
    }
    table.write_text(json.dumps(mine))
    env = {**os.environ, "FUSEGATE_THREAD_TABLE": str(table), "NUMBA_NUM_THREADS": "2"}
    assert _threads(env, "g1_walk", "handwritten", 64) == 1  # the rule would give 2 (64 envs / 16 per thread)
    assert _threads(env, "g1_walk", "handwritten", 1000) == 1  # the largest measured scale below
    assert _threads(env, "g1_walk", "handwritten", 8192) == 2
    assert _threads(env, "g1_walk", "assembled", 64) == 2  # not in the table: the rule
    table.write_text(json.dumps({**mine, "machine": "another CPU x160"}))
    assert _threads(env, "g1_walk", "handwritten", 64) == 2  # another machine's table is ignored


def test_a_request_wins_over_the_table(tmp_path, monkeypatch):
    kernel_mod.thread_table.cache_clear()
    monkeypatch.setattr(kernel_mod, "thread_table", lambda: {"g1_walk": {"handwritten": {"64": 1}}})
    assert kernels.load("g1_walk", "handwritten", num_envs=64, threads=2).threads == 2
    assert kernels.load("g1_walk", "handwritten", num_envs=64).threads == 1
