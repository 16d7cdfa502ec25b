"""Synthetic snapshots (spec E4): deterministic, in contract, plausible, clear of every threshold."""

import numpy as np
import pytest

import kernels
from gate.meter.subject import make_inputs
from kernels import registry
from kernels.tasks.g1_walk import constants as walk


@pytest.mark.parametrize("task", kernels.TASKS)
def test_deterministic_per_seed_and_in_contract(task):
    a = make_inputs(task, 333, seed=4)
    b = make_inputs(task, 333, seed=4)
    c = make_inputs(task, 333, seed=5)
    registry.contract(task).check_snapshot(a, num_envs=333)
    for name in a:
        np.testing.assert_array_equal(a[name], b[name], err_msg=name)
    assert any(not np.array_equal(a[n], c[n]) for n in a)
    assert all(np.isfinite(arr).all() for arr in a.values())
    assert ((a["noise_u"] >= 0) & (a["noise_u"] < 1)).all()


def test_walk_snapshot_is_plausible():
    s = make_inputs("g1_walk", 20000, seed=0)
    sd = s["sensordata"]
    for addr in (30, 34):  # orientation quaternions are unit
        np.testing.assert_allclose(np.linalg.norm(sd[:, addr : addr + 4], axis=1), 1.0, atol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(s["qpos"][:, 3:7], axis=1), 1.0, atol=1e-6)
    counts = sd[:, 68:70]
    assert set(np.unique(counts)) == {0, 1, 2, 3, 4}
    assert ((s["phase"] >= -np.pi) & (s["phase"] < np.pi)).all()
    done = kernels.load("g1_walk", "numpy", num_envs=20000).update_state(kernels.copy_snapshot(s))["done"]
    assert 0.01 < done.mean() < 0.03  # about 2% past a termination threshold
    assert ((s["feet_air_time"] > 0) == (s["last_contact"] == 0)).all()


def test_walk_snapshot_keeps_clear_of_thresholds():
    s = make_inputs("g1_walk", 50000, seed=1)
    sd, cmd = s["sensordata"].astype(np.float64), s["commands"].astype(np.float64)
    margin = 1e-4
    assert (np.abs(sd[:, walk.S_UPVECTOR_TORSO + 2]) > margin).all()
    norm = np.linalg.norm(cmd, axis=1)
    assert (np.abs(norm - walk.STAND_STILL_CMD_NORM) > margin).all()
    assert (np.abs(cmd[:, 1] - walk.HIP_SIDESTEP_VY) > margin).all()
    speed = np.linalg.norm(sd[:, 41:43], axis=1)
    assert (np.abs(speed - walk.PHASE_MASK_SPEED) > margin).all()
    assert (np.abs(np.abs(sd[:, 49]) - walk.PHASE_MASK_SPEED) > margin).all()
    advanced = s["phase"].astype(np.float64) + s["phase_dt"][:, None]
    assert (np.abs(advanced - np.pi) > margin).all()  # the wrap of the phase advance
