"""Every fast implementation of every task against its reference (spec E5), registry-parametrised."""

import numpy as np
import pytest

import kernels
from gate.meter import parity
from gate.meter.subject import make_inputs

CASES = [
    (task, impl)
    for task in kernels.TASKS
    for impl in kernels.registry.available(task)
    if impl != kernels.REFERENCE
]


# (num_envs, threads, noise_level): every pair of values of any two of them is in PAIRWISE (the quick lane);
# the full lane runs the whole product.
PAIRWISE = {
    (1, 1, 0.0),
    (1, 2, 1.0),
    (7, 1, 1.0),
    (7, 2, 0.0),
    (1000, 1, 0.0),
    (1000, 2, 1.0),
    (4099, 1, 1.0),
    (4099, 2, 0.0),
}
GRID = [
    pytest.param(n, t, noise, marks=() if (n, t, noise) in PAIRWISE else pytest.mark.slow)
    for n in (1, 7, 1000, 4099)
    for t in (1, 2)
    for noise in (0.0, 1.0)
]


@pytest.mark.parametrize(("task", "impl"), CASES)
@pytest.mark.parametrize(("num_envs", "threads", "noise_level"), GRID)
def test_parity_with_reference(task, impl, num_envs, threads, noise_level):
    for seed in (num_envs, num_envs + 1):
        report = parity.compare(
            task=task, impl=impl, num_envs=num_envs, seed=seed, threads=threads, noise_level=noise_level
        )
        bad = [a for a in report.arrays if not a.ok]
        assert not bad, f"seed {seed}: outside spec E5: {bad}"


@pytest.mark.parametrize(
    ("task", "impl"), [(t, i) for t in kernels.TASKS for i in kernels.registry.available(t)]
)
def test_every_output_element_is_written(task, impl):
    """Poisoned outputs must come back fully overwritten (no NaN / 0xFF left) on a NaN-free snapshot."""
    snap = make_inputs(task, 513, seed=5)
    k = kernels.load(task, impl, num_envs=513)
    parity.poison(k.outputs)
    out = k.update_state(snap)
    for name, arr in out.items():
        if arr.dtype.kind == "f":
            assert np.isfinite(arr).all(), f"{task}/{impl}: {name} has unwritten or non-finite elements"
        else:
            assert set(np.unique(arr)) <= {0, 1}, f"{task}/{impl}: {name} has values other than 0/1"


def test_parity_detects_a_wrong_kernel(monkeypatch):
    """The parity check itself can fail: a kernel that skips one term's weight is caught."""
    from kernels.tasks.g1_walk import reference as g1_walk

    snap = make_inputs("g1_walk", 64, seed=3)
    good = parity.compare_on(snap, task="g1_walk", impl="handwritten")
    assert good.ok
    monkeypatch.setitem(g1_walk.REWARD_TERMS, "pose", lambda s, p: np.zeros(s.q.shape[0]))
    bad = parity.compare_on(snap, task="g1_walk", impl="handwritten")
    assert not bad.ok
    assert {a.name for a in bad.arrays if not a.ok} == {"reward", "term_means"}


def test_compare_many_runs_the_reference_once_and_names_a_raising_case(monkeypatch):
    """The benchmarks' once-per-commit check: every (impl, threads) against one reference run; with ``catch`` a
    case that raises stands in its own slot, the others are still compared."""
    from gate.meter import subject

    registry = subject.registry()
    snap = make_inputs("g1_walk", 256, seed=11)
    loads = []
    real = registry.load
    monkeypatch.setattr(
        registry, "load", lambda task, impl, **kw: loads.append(impl) or real(task, impl, **kw)
    )
    cases = [("handwritten", 1), ("no_such_impl", 1), ("assembled", 2)]
    reports = parity.compare_many(snap, task="g1_walk", cases=cases, catch=True)
    assert loads.count(kernels.REFERENCE) == 1
    assert reports[0].ok and reports[2].ok and reports[2].threads == 2
    assert isinstance(reports[1], ValueError) and "no_such_impl" in str(reports[1])
    with pytest.raises(ValueError, match="no_such_impl"):
        parity.compare_many(snap, task="g1_walk", cases=cases)


def test_the_quick_lanes_parity_grid_covers_every_pair_of_values():
    grid = [p.values for p in GRID]
    assert len(grid) == 16 and len(PAIRWISE) == 8
    for a, b in ((0, 1), (0, 2), (1, 2)):
        assert {(g[a], g[b]) for g in grid} == {(g[a], g[b]) for g in PAIRWISE}
