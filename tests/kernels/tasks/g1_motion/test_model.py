"""g1_motion's MuJoCo model: Menagerie's scene edited to spec B1/B6."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

from kernels.tasks.g1_motion import constants as g1_motion
from kernels.tasks.g1_motion import model as models

# Spec B6, as printed: group -> (armature, kp, kd, effort, action scale).
B6 = {
    "5020": (0.0036097, 14.251, 0.9072, 25, 0.43858),
    "7520-14": (0.0101775, 40.179, 2.5579, 88, 0.54755),
    "7520-22": (0.0251019, 99.098, 6.3088, 139, 0.35066),
    "4010": (0.00425, 16.778, 1.0681, 5, 0.07450),
    "2x5020": (0.0072194, 28.501, 1.8145, 50, 0.43858),
}


def test_motion_model_follows_spec_b1_solver_and_b6_actuators():
    tm = models.motion_model()
    m = tm.model
    assert m.opt.timestep * tm.substeps == pytest.approx(g1_motion.DT) and tm.substeps == 4
    assert m.opt.integrator == mujoco.mjtIntegrator.mjINT_IMPLICITFAST
    assert (m.opt.iterations, m.opt.ls_iterations) == (10, 20)
    assert m.opt.cone == mujoco.mjtCone.mjCONE_PYRAMIDAL
    np.testing.assert_array_equal(m.jnt_range[1:], g1_motion.JOINT_RANGE)
    for a, joint in enumerate(tm.joint_names):
        armature, kp, kd, effort, scale = B6[models.actuator_group(joint)]
        dof = m.jnt_dofadr[m.actuator_trnid[a, 0]]
        assert m.dof_armature[dof] == pytest.approx(armature)
        assert m.actuator_gainprm[a, 0] == pytest.approx(kp, rel=1e-4)
        assert -m.actuator_biasprm[a, 1] == pytest.approx(kp, rel=1e-4)
        assert -m.actuator_biasprm[a, 2] == pytest.approx(kd, rel=1e-4)
        np.testing.assert_allclose(m.actuator_forcerange[a], [-effort, effort])
        assert tm.action_scale[a] == pytest.approx(scale, rel=1e-4)


def test_every_motion_joint_is_in_a_b6_group_and_unknown_names_are_refused():
    assert len({models.actuator_group(j) for j in models.motion_model().joint_names}) == len(B6)
    with pytest.raises(ValueError, match="no spec B6 actuator group"):
        models.actuator_group("tail_joint")
