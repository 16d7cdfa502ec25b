"""What the collector needs from a task's batch environment, and the parts both tasks share.

An env owns the batch of simulations, the snapshot arrays of its task's contract (spec E2/E3; getters fill the
physical ones and the observation noise from MuJoCo, the env fills the rest) and its bookkeeping. A step is, in
the collector's phases: ``apply_actions`` (other), ``sim.step`` (physics), ``fill_snapshot`` (getters), the
kernel's ``update_state``, ``advance`` (other: counters, command resample; returns the envs to reset), then for
those envs ``begin_reset`` (reset: their new state), ``sim.forward_rows`` (physics: mj_forward of those rows) and
``finish_reset`` (reset: their first observation, from the kernel run on just those rows).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable

import mujoco
import numpy as np

import kernels
from kernels.kernel import Kernel
from kernels.sim import bookkeeping, getters
from kernels.sim.backend import BatchSim
from kernels.sim.models import TaskModel

# The observation group the policy reads (every plan the collector runs must have it).
POLICY_OBS = "obs"
PRELOADED_BUCKETS = 64  # reset kernels loaded up front: every bucket up to this many rows
_RESULTS = ("reward", "done", "term_means")
# Random streams of an env: each call of a getter, reset or bookkeeping loop draws from its own stream.
STREAMS = {"getters": 0, "reset": 1, "bookkeeping": 2}


class TaskEnv(ABC):
    """``num_envs`` envs of one task on a ``BatchSim``."""

    task: str = ""
    stage: int = mujoco.mjtStage.mjSTAGE_NONE  # computed at the new state after each control step
    forward_stage: int = mujoco.mjtStage.mjSTAGE_ACC  # computed for reset rows
    outputs: tuple[str, ...] = ()  # derived MuJoCo fields the getters read
    physical: tuple[str, ...] = ()  # the snapshot arrays the getters fill
    shared: tuple[str, ...] = ()  # snapshot arrays not indexed by env (the motion library)
    keeps_state_on_reset: tuple[str, ...] = ()  # state the reset rows' kernel call writes for good

    def __init__(self, tm: TaskModel, num_envs: int, threads: int, seed: int, *, frames: int | None = None):
        self.tm = tm
        self.num_envs = num_envs
        self.threads = threads
        self.seed = seed
        self._calls = dict.fromkeys(STREAMS, 0)
        self.sim = BatchSim(
            tm, num_envs, threads, stage=self.stage, forward_stage=self.forward_stage, outputs=self.outputs
        )
        specs = kernels.registry.contract(self.task).snapshot
        self.snap = {
            s.name: np.zeros(s.concrete_shape(num_envs=num_envs, frames=frames or 0), s.dtype) for s in specs
        }
        self.all_rows = np.arange(num_envs, dtype=np.int64)
        self.reset_mask = np.zeros(num_envs, dtype=np.bool_)
        self._reset_kernels: dict[int, Kernel] = {}

    def apply_actions(self, actions: np.ndarray) -> None:
        """``actions`` (N, 29) float32 into the snapshot and, mapped to targets, into ctrl; then any push."""
        bookkeeping.apply_actions(
            actions, self.tm.action_scale, self.tm.default_pose, self.snap["actions"], self.sim.ctrl
        )
        self.push()

    def push(self) -> None:
        """A push before physics (g1_walk); none by default."""
        return None

    @abstractmethod
    def _get(self, rows: np.ndarray, key: np.uint64, out: dict[str, np.ndarray]) -> None:
        """The task's getter kernel."""

    @abstractmethod
    def advance(self, out: dict[str, np.ndarray]) -> np.ndarray:
        """Bookkeeping after ``update_state``; returns the rows to reset (done, timed out, clip ended)."""

    @abstractmethod
    def begin_reset(self, rows: np.ndarray) -> None:
        """New episodes for ``rows``: physical state (written, not yet forwarded) and bookkeeping."""

    def key(self, stream: str) -> np.uint64:
        """The key of the next call in ``stream``: the streams of one seed never overlap."""
        calls = self._calls[stream]
        self._calls[stream] = calls + 1
        return np.uint64(getters.stream(self.seed, (STREAMS[stream] << 56) + calls))

    def fill_snapshot(self, rows: np.ndarray, out: dict[str, np.ndarray]) -> None:
        """Getters: the physical arrays and fresh ``noise_u`` of ``rows`` into ``out`` (row i from sim rows[i])."""
        self._get(rows, self.key("getters"), out)

    def finish_reset(
        self, rows: np.ndarray, out: dict[str, np.ndarray], load: Callable[[int], Kernel]
    ) -> None:
        """Overwrite the reset rows of the kernel outputs with their first observation.

        The kernel runs on a snapshot of just those rows, padded with copies of the first one to a power of
        two (so a handful of kernel sizes serve every reset); its reward and done are discarded, its
        observation groups are copied into ``out``, and the state arrays named by ``keeps_state_on_reset``
        are kept.
        """
        n = len(rows)
        size = self.bucket(n)
        padded = np.concatenate([rows, np.full(size - n, rows[0])]) if size > n else rows
        sub = {name: (arr if name in self.shared else arr[padded]) for name, arr in self.snap.items()}
        physical = {name: sub[name] for name in self.physical}  # fresh copies: the getters overwrite them
        self.fill_snapshot(padded, physical)
        first = self.reset_kernel(size, load).update_state(sub)
        for name, arr in first.items():
            if name not in _RESULTS:
                out[name][rows] = arr[:n]
        for name in self.keeps_state_on_reset:
            self.snap[name][rows] = sub[name][:n]
        self.after_reset(rows)

    def bucket(self, rows: int) -> int:
        """The kernel size that serves ``rows`` reset rows: the next power of two, at most N."""
        return min(1 << (rows - 1).bit_length(), self.num_envs)

    def reset_kernel(self, size: int, load: Callable[[int], Kernel]) -> Kernel:
        if size not in self._reset_kernels:
            self._reset_kernels[size] = load(size)
        return self._reset_kernels[size]

    def preload_reset_kernels(self, load: Callable[[int], Kernel]) -> None:
        """Load the small reset kernels now, so that loading them never lands inside a timed step."""
        size = 1
        while size <= min(PRELOADED_BUCKETS, self.num_envs):
            self.reset_kernel(self.bucket(size), load)
            size *= 2

    def after_reset(self, rows: np.ndarray) -> None:
        """Bookkeeping once the reset rows' first observation is written."""
        return None

    def reset(self, rows: np.ndarray, out: dict[str, np.ndarray], load: Callable[[int], Kernel]) -> None:
        """The whole reset of ``rows``, untimed (construction, tests)."""
        self.begin_reset(rows)
        self.sim.forward_rows(rows)
        self.finish_reset(rows, out, load)
