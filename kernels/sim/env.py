"""What the collector needs from a task's batch environment (``TaskEnv``), and the parts every task shares.

A task's env is a subclass in its package, named by its spec (``TaskSpec.env``); the collector gets it from the
registry.

An env owns the batch of simulations, the snapshot arrays of its task's contract (spec E2/E3; getters fill the
physical ones and the observation noise from MuJoCo, the env fills the rest) and its bookkeeping.

Resets follow the next-step convention of Gymnasium's vector envs (``AutoresetMode.NEXT_STEP``) and EnvPool: the
step that ends an episode returns its last observation; at the start of the next step the env resets those rows
instead of stepping them (``begin_reset`` writes the new state, ``sim.forward_rows`` runs mj_forward), and that
step's one kernel call gives them their first observation. Their reward and done of that step mean nothing, and
the replay marks them (``reset``). So a reset costs no extra kernel call, and the kernel always runs on all N.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import mujoco
import numpy as np

from kernels.contract import TaskContract
from kernels.sim import bookkeeping, getters
from kernels.sim.backend import BatchSim
from kernels.sim.models import TaskModel

# The observation group the policy reads (every plan the collector runs must have it).
POLICY_OBS = "obs"


class TaskEnv(ABC):
    """``num_envs`` envs of one task on a ``BatchSim``."""

    contract: TaskContract  # the task's array contract: the snapshot arrays the env owns
    stage: int = mujoco.mjtStage.mjSTAGE_NONE  # computed at the new state after each control step
    forward_stage: int = mujoco.mjtStage.mjSTAGE_ACC  # computed for reset rows
    outputs: tuple[str, ...] = ()  # derived MuJoCo fields the getters read
    physical: tuple[str, ...] = ()  # the snapshot arrays the getters fill

    def __init__(self, tm: TaskModel, num_envs: int, threads: int, seed: int, *, frames: int | None = None):
        self.tm = tm
        self.task = self.contract.task
        self.num_envs = num_envs
        self.seed = seed
        self.key_calls = np.zeros(getters.N_STREAMS, np.int64)  # keys drawn so far per random stream
        self.sim = BatchSim(
            tm, num_envs, threads, stage=self.stage, forward_stage=self.forward_stage, outputs=self.outputs
        )
        specs = self.contract.snapshot
        self.snap = {
            s.name: np.zeros(s.concrete_shape(num_envs=num_envs, frames=frames or 0), s.dtype) for s in specs
        }
        self.all_rows = np.arange(num_envs, dtype=np.int64)
        self.reset_mask = np.zeros(num_envs, dtype=np.bool_)  # written by ``advance``
        self.just_reset = np.zeros(num_envs, dtype=np.bool_)  # the rows reset at the start of this step
        self.pending = self.all_rows  # rows to reset at the start of the next step: all, at first

    def apply_actions(self) -> None:
        """The snapshot's ``actions`` (the policy writes them there), mapped to targets, into ctrl; then any push."""
        bookkeeping.write_ctrl(
            self.snap["actions"], self.tm.action_scale, self.tm.default_pose, self.sim.ctrl
        )
        self.push()

    def swap_actions(self) -> None:
        """After a step, its actions are the next step's ``last_actions``: the two buffers trade places."""
        self.snap["actions"], self.snap["last_actions"] = self.snap["last_actions"], self.snap["actions"]

    def push(self) -> None:
        """A push before physics; none by default."""
        return None

    def take_pending(self) -> np.ndarray:
        """The rows to reset now (those that ended last step), marked in ``just_reset``."""
        rows, self.pending = self.pending, self.all_rows[:0]
        self.just_reset.fill(False)
        self.just_reset[rows] = True
        return rows

    def stepping(self) -> np.ndarray:
        """The rows that step this step: all but the ones just reset."""
        return np.flatnonzero(~self.just_reset)

    @abstractmethod
    def _get(self, out: dict[str, np.ndarray]) -> None:
        """The task's getter kernel."""

    @abstractmethod
    def _advance(self, out: dict[str, np.ndarray]) -> None:
        """The task's bookkeeping kernel: writes ``reset_mask``."""

    def advance(self, out: dict[str, np.ndarray]) -> None:
        """Bookkeeping after ``update_state``; sets ``pending`` to the rows that ended (done, timed out, ...)
        and makes this step's actions the next step's ``last_actions``."""
        self._advance(out)
        self.pending = np.flatnonzero(self.reset_mask)
        self.swap_actions()

    @abstractmethod
    def begin_reset(self, rows: np.ndarray) -> None:
        """New episodes for ``rows``: physical state (written, not yet forwarded) and bookkeeping."""

    def fill_snapshot(self, out: dict[str, np.ndarray]) -> None:
        """Getters: the physical arrays and fresh ``noise_u`` of every env into ``out``."""
        self._get(out)
