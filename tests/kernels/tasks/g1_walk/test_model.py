"""g1_walk's MuJoCo model: the playground's flat feet-only scene as shipped."""

from __future__ import annotations

import numpy as np
import pytest

from kernels.tasks.g1_walk import constants as g1_walk
from kernels.tasks.g1_walk import model as models


def test_walk_model_is_the_flat_feet_only_scene():
    tm = models.walk_model()
    m = tm.model
    assert (m.nq, m.nv, m.nu, m.nbody, m.nsensordata) == (36, 35, 29, 31, 75)
    assert m.opt.timestep == pytest.approx(0.002) and tm.substeps == 10
    assert tm.substeps * m.opt.timestep == pytest.approx(g1_walk.DT)
    np.testing.assert_allclose(m.key_qpos[tm.keyframe][7:], g1_walk.DEFAULT_POSE)
    np.testing.assert_allclose(tm.action_scale, 0.5)
