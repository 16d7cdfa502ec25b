"""Two trees timed in lockstep (``gate.meter.duet``): each side imports its own tree, samples alternate."""

from __future__ import annotations

from pathlib import Path

import pytest

from gate.meter import duet

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.slow
def test_both_sides_time_the_same_cell_in_alternation_and_name_a_failing_side(tmp_path):
    cell = duet.Cell(task="g1_walk", impl="handwritten", num_envs=64, threads=1)
    with duet.Duet(ROOT, ROOT, seed=1) as pair:
        pairs = pair.pairs(cell, 6)
        assert len(pairs) == 6 and all(p.head_s > 0 and p.base_s > 0 for p in pairs)
        assert {p.first for p in pairs} <= {"head", "base"}
        # an A/A: both sides run the same code on the same layout, so the ratios sit around 1
        ratios = sorted(p.head_s / p.base_s for p in pairs)
        assert 0.3 < ratios[len(ratios) // 2] < 3.0
        alone = pair.alone("base", cell, 3)
        assert len(alone) == 3 and all(s > 0 for s in alone)
        with pytest.raises(duet.DuetError, match=r"the head worker .*unknown implementation 'nope'"):
            pair.pairs(duet.Cell(task="g1_walk", impl="nope", num_envs=64, threads=1), 2)
    broken = tmp_path / "tree"  # a tree whose code does not import: the side says so, not a hang
    broken.mkdir()
    with pytest.raises(duet.DuetError, match="the base worker"), duet.Duet(ROOT, broken) as pair:
        pair.pairs(cell, 1)


@pytest.mark.slow
def test_a_collector_step_is_a_cell_too():
    cell = duet.Cell(task="g1_motion", impl="handwritten", num_envs=16, threads=1, kind=duet.COLLECTOR)
    with duet.Duet(ROOT, ROOT) as pair:
        pairs = pair.pairs(cell, 3, warmup=1)
    assert len(pairs) == 3 and all(p.head_s > 1e-4 for p in pairs)  # a step of physics and all: not a no-op
