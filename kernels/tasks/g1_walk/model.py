"""The g1_walk model: the MuJoCo Playground scene ``scene_mjx_feetonly_flat_terrain.xml`` unchanged (spec A1, C):
timestep 0.002, 10 substeps per control step, the feet-only collision pairs and the 75 sensordata values the
hot slice reads.
"""

from __future__ import annotations

import functools

import mujoco
import numpy as np

from kernels.sim.models import ASSETS, TaskModel, joint_order
from kernels.tasks.g1_walk import constants as g1_walk

WALK_XML = ASSETS / "mujoco_playground/_src/locomotion/g1/xmls/scene_mjx_feetonly_flat_terrain.xml"
SUBSTEPS = 10  # per control step (spec A1)


@functools.cache
def walk_model() -> TaskModel:
    model = mujoco.MjModel.from_xml_path(str(WALK_XML))
    return TaskModel(
        task="g1_walk",
        model=model,
        substeps=SUBSTEPS,
        keyframe=model.key("knees_bent").id,
        joint_names=joint_order(model),
        action_scale=np.full(g1_walk.NUM_JOINTS, 0.5),
        default_pose=g1_walk.DEFAULT_POSE.copy(),
    )
