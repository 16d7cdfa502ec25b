"""The reference motion of g1_motion: a procedural walking clip posed kinematically on the G1 model itself.

Nothing is downloaded. The clip is a 1 Hz walking gait in joint space (hips, knees and ankles in antiphase
left/right, arms swinging against the legs, a little waist yaw) around the B1 default pose, clipped to the
soft joint limits, with the pelvis moving forward at 0.3 m/s, swaying sideways and in yaw, at the height that
keeps the lower ankle at its standing height. Every frame is posed with MuJoCo (``mj_kinematics``,
``mj_comPos``, ``mj_comVel``): joint velocities are central differences of the poses
(``mj_differentiatePos``), body velocities are MuJoCo's own (``mj_objectVelocity`` at the body origin, world
frame), as ``csv_to_npz`` logs them.

The file follows spec B8 (50 fps, all 30 bodies in MuJoCo order, world excluded) plus a ``format`` key, and is
cached on first use under ``<cache>/fusegate/motions/``, named by a hash of the generator, the model edits, the
task constants, the MJCF files and the MuJoCo version, so a change to any of them makes a new file.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import zipfile
from pathlib import Path

import mujoco
import numpy as np

from kernels.geometry import quat_from_euler
from kernels.tasks.g1_motion import constants as task
from kernels.tasks.g1_motion import model as models

FORMAT = 1
FPS = 50
FRAMES = 500  # 10 s, one episode (spec B1)
GAIT_HZ = 1.0
FORWARD_SPEED = 0.3  # m/s
KEYS = ("fps", "joint_pos", "joint_vel", "body_pos_w", "body_quat_w", "body_lin_vel_w", "body_ang_vel_w")


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "fusegate" / "motions"


def _joint_offsets(names: tuple[str, ...], phase: np.ndarray) -> np.ndarray:
    """(T, 29) offsets from the default pose: the gait, per joint name."""
    s, c = np.sin(phase), np.cos(phase)
    offsets = np.zeros((len(phase), len(names)))
    for j, name in enumerate(names):
        side = 1.0 if name.startswith("left") else -1.0  # right side in antiphase
        if "hip_pitch" in name:
            offsets[:, j] = -0.35 * side * s
        elif "knee" in name:
            offsets[:, j] = 0.3 * (0.5 - 0.5 * side * c)
        elif "ankle_pitch" in name:
            offsets[:, j] = -0.15 * (0.5 - 0.5 * side * c)
        elif "shoulder_pitch" in name:
            offsets[:, j] = 0.3 * side * s
        elif "elbow" in name:
            offsets[:, j] = 0.15 * (0.5 + 0.5 * side * s)
        elif "waist_yaw" in name:
            offsets[:, j] = 0.1 * s
    return offsets


def generate(frames: int = FRAMES) -> dict[str, np.ndarray]:
    """The clip in the spec B8 layout (float64, ``fps`` int)."""
    tm = models.motion_model()
    m = tm.model
    d = mujoco.MjData(m)
    dt = 1.0 / FPS
    time = np.arange(frames) * dt
    phase = 2 * np.pi * GAIT_HZ * time
    joints = np.clip(
        tm.default_pose + _joint_offsets(tm.joint_names, phase), task.SOFT_LOWER, task.SOFT_UPPER
    )
    yaw = 0.1 * np.sin(0.5 * phase)
    root_quat = quat_from_euler(np.zeros(frames), np.zeros(frames), yaw)
    ankles = [m.body(f"{side}_ankle_roll_link").id for side in ("left", "right")]

    qpos = np.zeros((frames, m.nq))
    qpos[:, 0] = FORWARD_SPEED * time
    qpos[:, 1] = 0.03 * np.sin(phase)
    qpos[:, 3:7] = root_quat
    qpos[:, 7:] = joints
    # Pelvis height: the lower ankle stays at its height in the default standing pose.
    d.qpos[:] = 0.0
    d.qpos[2], d.qpos[3], d.qpos[7:] = task.DEFAULT_BASE_HEIGHT, 1.0, tm.default_pose
    mujoco.mj_kinematics(m, d)
    standing = d.xpos[ankles, 2].min()
    for k in range(frames):
        d.qpos[:] = qpos[k]
        mujoco.mj_kinematics(m, d)
        qpos[k, 2] = standing - d.xpos[ankles, 2].min()

    qvel = np.zeros((frames, m.nv))
    for k in range(frames):
        before, after = max(k - 1, 0), min(k + 1, frames - 1)
        mujoco.mj_differentiatePos(m, qvel[k], (after - before) * dt, qpos[before], qpos[after])

    nb = m.nbody - 1
    out = {name: np.zeros((frames, nb, 3)) for name in ("body_pos_w", "body_lin_vel_w", "body_ang_vel_w")}
    out["body_quat_w"] = np.zeros((frames, nb, 4))
    velocity = np.zeros(6)
    for k in range(frames):
        d.qpos[:], d.qvel[:] = qpos[k], qvel[k]
        mujoco.mj_kinematics(m, d)
        mujoco.mj_comPos(m, d)
        mujoco.mj_comVel(m, d)
        out["body_pos_w"][k] = d.xpos[1:]
        out["body_quat_w"][k] = d.xquat[1:]
        for b in range(1, m.nbody):
            mujoco.mj_objectVelocity(m, d, mujoco.mjtObj.mjOBJ_XBODY, b, velocity, 0)
            out["body_ang_vel_w"][k, b - 1] = velocity[:3]
            out["body_lin_vel_w"][k, b - 1] = velocity[3:]
    return {"fps": np.array([FPS]), "joint_pos": qpos[:, 7:], "joint_vel": qvel[:, 6:], **out}


def _key(frames: int) -> str:
    """What the clip depends on: this generator, the model edits, the task constants, the MJCF and MuJoCo."""
    digest = hashlib.sha256()
    xml_dir = models.MOTION_XML.parent
    for path in (Path(__file__), Path(models.__file__), Path(task.__file__), *sorted(xml_dir.glob("*.xml"))):
        digest.update(path.read_bytes())
    digest.update(f"{mujoco.__version__} {frames}".encode())
    return digest.hexdigest()[:16]


def _valid(clip: dict[str, np.ndarray], frames: int) -> bool:
    if int(clip.get("format", -1)) != FORMAT or any(k not in clip for k in KEYS):
        return False
    return clip["joint_pos"].shape == (frames, task.NUM_JOINTS) and clip["body_pos_w"].shape[0] == frames


def load(frames: int = FRAMES, *, directory: Path | None = None) -> dict[str, np.ndarray]:
    """The clip, generated on first use and cached (an unreadable or stale cache file is regenerated)."""
    directory = cache_dir() if directory is None else directory
    path = directory / f"g1_stride_{_key(frames)}.npz"
    try:
        with np.load(path) as f:
            clip = {k: f[k] for k in f.files}
        if _valid(clip, frames):
            return {k: clip[k] for k in KEYS}
    except (OSError, ValueError, zipfile.BadZipFile):  # missing, truncated or not an npz: regenerate
        pass
    clip = generate(frames)
    directory.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=directory, suffix=".npz", delete=False) as tmp:
        np.savez(tmp, format=np.array(FORMAT), **clip)
    os.replace(tmp.name, path)
    return clip


def tracked_library(clip: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The spec E3 ``motion_*`` arrays (float32): the clip restricted to the 14 tracked bodies."""
    m = models.motion_model().model
    index = [m.body(name).id - 1 for name in task.BODIES]  # the clip excludes the world body
    lib = {
        "motion_joint_pos": clip["joint_pos"],
        "motion_joint_vel": clip["joint_vel"],
        **{f"motion_{k}": clip[k][:, index] for k in ("body_pos_w", "body_lin_vel_w", "body_ang_vel_w")},
        "motion_body_quat_w": clip["body_quat_w"][:, index],
    }
    return {k: np.ascontiguousarray(v, dtype=np.float32) for k, v in lib.items()}
