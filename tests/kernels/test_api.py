"""The Python API other tools build on: names, and a clear ValueError for every bad input (spec E1, issue API)."""

import numpy as np
import pytest

import kernels
from gate.meter import parity
from kernels import registry
from tests.kernels.snapshots import make_inputs

IMPL_CASES = [(task, impl) for task in kernels.TASKS for impl in kernels.registry.available(task)]
N = 64


def test_names():
    assert "g1_walk" in kernels.TASKS
    assert kernels.IMPLS[0] == "numpy" == kernels.REFERENCE
    assert "handwritten" in kernels.IMPLS


@pytest.mark.parametrize(("task", "impl"), IMPL_CASES)
def test_update_state_returns_the_contract(task, impl):
    snap = make_inputs(task, num_envs=N, seed=0)
    out = kernels.load(task, impl, num_envs=N).update_state(snap)
    contract = registry.contract(task)
    assert list(out) == [s.name for s in contract.outputs]
    for spec in contract.outputs:
        assert out[spec.name].shape == spec.concrete_shape(num_envs=N)
        assert out[spec.name].dtype == spec.dtype


def _refused(task, impl, snap, match, **call):
    """The call (``update_state(snap, **call)``) raises ValueError matching ``match`` and leaves outputs and
    state untouched."""
    k = kernels.load(task, impl, num_envs=N)
    parity.poison(k.outputs)
    before = {name: a.copy() for name, a in snap.items() if isinstance(a, np.ndarray)}
    with pytest.raises(ValueError, match=match):
        k.update_state(snap, **call)
    for name, arr in k.outputs.items():
        assert np.array_equal(arr, np.full_like(arr, arr.flat[0]), equal_nan=True), f"{name} was touched"
    for name, arr in before.items():
        assert np.array_equal(snap[name], arr, equal_nan=True), f"{name} was touched"


def _first_input(task):
    return registry.contract(task).inputs[0].name


def _state(task):
    return registry.contract(task).state[0].name


@pytest.mark.parametrize(("task", "impl"), IMPL_CASES)
def test_wrong_dtype_is_refused(task, impl):
    snap = make_inputs(task, N, seed=0)
    name = _first_input(task)
    snap[name] = snap[name].astype(np.float64)
    _refused(task, impl, snap, rf"'{name}' must have dtype float32, got float64")


@pytest.mark.parametrize(("task", "impl"), IMPL_CASES)
def test_wrong_shape_is_refused(task, impl):
    snap = make_inputs(task, N, seed=0)
    name = _first_input(task)
    snap[name] = np.ascontiguousarray(snap[name][:, :-1])
    _refused(task, impl, snap, rf"'{name}' must have shape")


@pytest.mark.parametrize(("task", "impl"), IMPL_CASES)
def test_num_envs_mismatch_is_refused(task, impl):
    snap = make_inputs(task, N + 1, seed=0)
    _refused(task, impl, snap, rf"N = {N} envs, as the kernel was loaded")


@pytest.mark.parametrize(("task", "impl"), IMPL_CASES)
def test_non_contiguous_is_refused(task, impl):
    snap = make_inputs(task, N, seed=0)
    name = _first_input(task)
    snap[name] = np.asfortranarray(snap[name])
    _refused(task, impl, snap, rf"'{name}' must be C-contiguous")


@pytest.mark.parametrize(("task", "impl"), IMPL_CASES)
def test_missing_array_is_refused(task, impl):
    snap = make_inputs(task, N, seed=0)
    name = _state(task)
    del snap[name]
    _refused(task, impl, snap, rf"missing {name}")


@pytest.mark.parametrize(("task", "impl"), IMPL_CASES)
def test_read_only_state_is_refused(task, impl):
    snap = make_inputs(task, N, seed=0)
    snap[_state(task)].flags.writeable = False
    _refused(task, impl, snap, "updated in place")


@pytest.mark.parametrize(("task", "impl"), IMPL_CASES)
def test_not_an_array_is_refused(task, impl):
    snap = make_inputs(task, N, seed=0)
    name = _first_input(task)
    snap[name] = snap[name].tolist()
    _refused(task, impl, snap, rf"'{name}' must be a numpy.ndarray")


@pytest.mark.parametrize("impl", kernels.IMPLS)
@pytest.mark.parametrize("num_envs", [0, -3, 2.5, None])
def test_bad_num_envs_is_refused(impl, num_envs):
    with pytest.raises(ValueError, match="num_envs must be a positive integer"):
        kernels.load("g1_walk", impl, num_envs=num_envs)


@pytest.mark.parametrize("level", [float("nan"), -1.0])
def test_bad_noise_level_is_refused(level):
    with pytest.raises(ValueError, match="noise_level"):
        kernels.load("g1_walk", "handwritten", num_envs=N, noise_level=level)


def test_unknown_task_and_impl():
    known = ", ".join(kernels.TASKS)
    with pytest.raises(ValueError, match=rf"unknown task 'g2_run'; known tasks: {known}$"):
        kernels.load("g2_run", "numpy", num_envs=N)
    with pytest.raises(ValueError, match=r"unknown implementation 'fast'; known implementations: numpy"):
        kernels.load("g1_walk", "fast", num_envs=N)
    with pytest.raises(ValueError, match="unknown task"):
        registry.default().meter("g2_run")


@pytest.mark.parametrize(("task", "impl"), IMPL_CASES)
def test_a_call_without_the_layout_check_writes_the_same_outputs(task, impl):
    snap = make_inputs(task, num_envs=N, seed=4)
    checked, unchecked = (kernels.load(task, impl, num_envs=N) for _ in range(2))
    want = checked.update_state({k: v.copy() for k, v in snap.items()})
    parity.poison(unchecked.outputs)
    got = unchecked.update_state({k: v.copy() for k, v in snap.items()}, check_layout=False)
    for name in want:
        np.testing.assert_array_equal(got[name], want[name], err_msg=name)


@pytest.mark.parametrize("impl", kernels.registry.available("g1_motion"))
def test_frame_indexes_are_checked_without_the_layout_check(impl):
    """Values change every call, so skipping the layout check keeps the range check of motion frames."""
    snap = make_inputs("g1_motion", num_envs=N, seed=0)
    frames = snap["motion_body_pos_w"].shape[0]
    snap["time_steps"][5] = frames
    match = rf"'time_steps' holds frame indexes.*got values from \d+ to {frames};"
    _refused("g1_motion", impl, snap, match, check_layout=False)
