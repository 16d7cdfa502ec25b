"""The g1_motion model: the MuJoCo Menagerie ``unitree_g1/scene.xml``, edited with ``mujoco.MjSpec`` to mjlab's
tracking settings, because mjlab's own G1 MJCF is not shipped (the joint ranges of
``kernels.tasks.g1_motion.constants`` come from the same file): the solver of spec B1 (timestep 0.005,
implicitfast, Newton, 10 iterations, 20 line-search iterations, pyramidal cone), decimation 4 (0.02 s per control
step, so the 50 Hz motion clip advances one frame per step), and the actuators of spec B6 (per-group armature,
kp = I w^2, kd = 2 z I w, force limit = effort). Menagerie's collision geoms, joint friction loss (0.3) and floor
are kept: every collision geom collides, as in mjlab.
"""

from __future__ import annotations

import functools
import math

import mujoco
import numpy as np

from kernels.sim.models import ASSETS, TaskModel, joint_order
from kernels.tasks.g1_motion import constants as g1_motion

MOTION_XML = ASSETS / "mujoco_menagerie/unitree_g1/scene.xml"
SUBSTEPS = 4  # per control step (spec B1)

# Spec B6: actuator groups by joint-name fragment -> (armature I, effort limit). Gains follow from I.
NATURAL_FREQ = 2 * math.pi * 10.0
DAMPING_RATIO = 2.0
ACTUATOR_GROUPS: dict[str, tuple[float, float]] = {
    "5020": (0.0036097, 25.0),
    "7520-14": (0.0101775, 88.0),
    "7520-22": (0.0251019, 139.0),
    "4010": (0.00425, 5.0),
    "2x5020": (0.0072194, 50.0),
}
_GROUP_OF = {
    "shoulder_pitch": "5020",
    "shoulder_roll": "5020",
    "shoulder_yaw": "5020",
    "elbow": "5020",
    "wrist_roll": "5020",
    "hip_pitch": "7520-14",
    "hip_yaw": "7520-14",
    "waist_yaw": "7520-14",
    "hip_roll": "7520-22",
    "knee": "7520-22",
    "wrist_pitch": "4010",
    "wrist_yaw": "4010",
    "waist_roll": "2x5020",
    "waist_pitch": "2x5020",
    "ankle_pitch": "2x5020",
    "ankle_roll": "2x5020",
}


def actuator_group(joint: str) -> str:
    """The spec B6 group of a joint name such as ``left_hip_pitch_joint``."""
    for fragment, group in _GROUP_OF.items():
        if fragment in joint:
            return group
    raise ValueError(f"joint {joint!r} is in no spec B6 actuator group")


def gains(group: str) -> tuple[float, float, float, float]:
    """(armature, kp, kd, effort) of a spec B6 group."""
    armature, effort = ACTUATOR_GROUPS[group]
    return armature, armature * NATURAL_FREQ**2, 2 * DAMPING_RATIO * armature * NATURAL_FREQ, effort


@functools.cache
def motion_model() -> TaskModel:
    spec = mujoco.MjSpec.from_file(str(MOTION_XML))
    spec.option.timestep = g1_motion.DT / SUBSTEPS
    spec.option.integrator = mujoco.mjtIntegrator.mjINT_IMPLICITFAST
    spec.option.solver = mujoco.mjtSolver.mjSOL_NEWTON
    spec.option.iterations = 10
    spec.option.ls_iterations = 20
    spec.option.cone = mujoco.mjtCone.mjCONE_PYRAMIDAL
    scale = []
    for actuator in spec.actuators:
        armature, kp, kd, effort = gains(actuator_group(actuator.target))
        spec.joint(actuator.target).armature = armature
        actuator.gainprm[0] = kp
        actuator.biasprm[:3] = [0.0, -kp, -kd]
        actuator.forcelimited = mujoco.mjtLimited.mjLIMITED_TRUE
        actuator.forcerange = [-effort, effort]
        scale.append(0.25 * effort / kp)
    model = spec.compile()
    return TaskModel(
        task="g1_motion",
        model=model,
        substeps=SUBSTEPS,
        keyframe=-1,
        joint_names=joint_order(model),
        action_scale=np.array(scale),
        default_pose=g1_motion.DEFAULT_POSE.copy(),
    )
