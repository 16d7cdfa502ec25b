"""N G1 simulations on MuJoCo's threaded batch API, with live views of the fields the tasks read.

``mujoco.batch.Batch`` steps every simulation on its own thread pool (``nthread`` = the placement's threads)
and was faster here than ``mujoco.rollout`` (``fusegate collect --physics-baseline`` times both on the same
states). The batch is persistent (one MjData per simulation), so a step that asks for the velocity stage at
the new state costs nothing extra: its next step starts from those stages.

State fields (qpos, qvel, ctrl, ...) are writable float64 views of the batch's rows; derived fields
(sensordata, xpos, cvel, ...) are read-only copies the batch refreshes after every call. A simulation that
MuJoCo fails raises ``mujoco.batch.SimulationError`` naming it.
"""

from __future__ import annotations

import mujoco
import mujoco.batch
import numpy as np

from kernels.sim.models import TaskModel

STATE_FIELDS = ("time", "qpos", "qvel", "act", "ctrl", "qacc_warmstart", "qfrc_applied", "xfrc_applied")


class BatchSim:
    """``num_envs`` simulations of one task model, stepped ``substeps`` times per control step."""

    def __init__(
        self,
        tm: TaskModel,
        num_envs: int,
        threads: int,
        *,
        stage: int,
        forward_stage: int,
        outputs: tuple[str, ...],
    ):
        self.tm = tm
        self.forward_stage = forward_stage
        self.model = tm.model
        self.num_envs = num_envs
        self.threads = threads
        self.stage = stage
        self.batch = mujoco.batch.Batch(tm.model, num_envs, nthread=threads, persistent=True)
        self.views = {name: self.batch.bind(name) for name in (*STATE_FIELDS, *outputs)}
        self.qpos, self.qvel, self.ctrl = self.views["qpos"], self.views["qvel"], self.views["ctrl"]

    def __getitem__(self, name: str) -> np.ndarray:
        return self.views[name]

    def step(self, rows: np.ndarray | None = None) -> None:
        """One control step of ``rows`` (default: all): ``substeps`` mj_step calls with ctrl held, then the
        stages asked for."""
        self.batch.step(ids=rows, nstep=self.tm.substeps, stage=self.stage)

    def forward_rows(self, rows: np.ndarray) -> None:
        """mj_forward for ``rows`` (after a reset wrote their state), up to the stage the task reads."""
        self.batch.forward(ids=rows, stage=self.forward_stage)

    def get_data(self, sim: int) -> mujoco.MjData:
        """Simulation ``sim``'s whole MjData (its derived fields are those of the last call)."""
        return self.batch.get_data(sim)

    def copy_state_from(self, other: BatchSim) -> None:
        """Make this batch's state equal ``other``'s (same model and size): for physics-alone baselines."""
        for name in STATE_FIELDS:
            self.views[name][...] = other.views[name]
