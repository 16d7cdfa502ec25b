"""Physics alone, for comparison with the collector's physics phase: the same states stepped by a bare
``mujoco.batch.Batch`` and by ``mujoco.rollout``, at the same N and threads, in the same run.

Just before each timed collector step's batch step, the batch's state is copied to a second ``BatchSim`` (the
bare batch) and to a ``rollout`` initial state; after the collector's step both step that copy of the same rows
(those not being reset) for one control step, ctrl held, in random order. Only the stepping is timed, never the
copies. ``mujoco.rollout`` records the state and sensordata after every substep, as its API always does; that
recording is part of what it costs.
"""

from __future__ import annotations

import time

import mujoco
import numpy as np
from mujoco import rollout

from kernels.sim.backend import BatchSim
from kernels.sim.collector import Collector

METHODS = ("batch", "rollout")


class PhysicsBaseline:
    def __init__(self, collector: Collector, seed: int = 0):
        sim = collector.env.sim
        self.sim = sim
        self.bare = BatchSim(
            sim.tm, sim.num_envs, sim.threads, stage=sim.stage, forward_stage=sim.forward_stage, outputs=()
        )
        m = sim.model
        self.spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
        self.initial = np.zeros((sim.num_envs, mujoco.mj_stateSize(m, self.spec)))
        self.control = np.zeros((sim.num_envs, sim.tm.substeps, m.nu))
        self.warmstart = np.zeros((sim.num_envs, m.nv))
        self.datas = [mujoco.MjData(m) for _ in range(sim.threads)]
        self.pool = rollout.Rollout(nthread=sim.threads if sim.threads > 1 else 0)
        self.state_out = np.zeros((sim.num_envs, sim.tm.substeps, self.initial.shape[1]))
        self.sensor_out = np.zeros((sim.num_envs, sim.tm.substeps, m.nsensordata))
        self.rng = np.random.default_rng(seed)
        self.rows = collector.env.all_rows
        self.times: dict[str, list[float]] = {name: [] for name in METHODS}

    def capture(self, rows: np.ndarray) -> None:
        """Copy the collector's state just before its physics step of ``rows`` (the rows not being reset)."""
        sim = self.sim
        self.rows = rows
        self.bare.copy_state_from(sim)
        nq, nv = sim.model.nq, sim.model.nv
        self.initial[:, 0] = sim["time"]
        self.initial[:, 1 : 1 + nq] = sim.qpos
        self.initial[:, 1 + nq : 1 + nq + nv] = sim.qvel
        self.control[:] = sim.ctrl[:, None, :]
        self.warmstart[:] = sim["qacc_warmstart"]
        n = len(rows)
        self.rollout_args = {
            "initial_state": self.initial[rows],
            "control": self.control[rows],
            "initial_warmstart": self.warmstart[rows],
            "state": self.state_out[:n],
            "sensordata": self.sensor_out[:n],
        }

    def step(self) -> None:
        """Step the captured state with both methods, in random order, timing each (NaN: no row stepped)."""
        if len(self.rows) == 0:
            for name in METHODS:
                self.times[name].append(float("nan"))
            return
        for name in self.rng.permutation(METHODS):
            start = time.perf_counter()
            if name == "batch":
                self.bare.step(None if len(self.rows) == self.sim.num_envs else self.rows)
            else:
                self.pool.rollout(self.sim.model, self.datas, nstep=self.sim.tm.substeps, **self.rollout_args)
            self.times[str(name)].append(time.perf_counter() - start)

    def summary(self, collector_step_s: np.ndarray) -> dict:
        """Medians (ms) and per-step ratios (median, p5, p95) against the bare batch on the same states."""
        batch = np.array(self.times["batch"])
        rollout_s = np.array(self.times["rollout"])

        def ratio(a: np.ndarray) -> dict[str, float]:
            r = a / batch
            return {
                "median": float(np.median(r)),
                "p5": float(np.percentile(r, 5)),
                "p95": float(np.percentile(r, 95)),
            }

        return {
            "batch_ms": float(np.median(batch) * 1e3),
            "rollout_ms": float(np.median(rollout_s) * 1e3),
            "collector_ms": float(np.median(collector_step_s) * 1e3),
            "collector_vs_batch": ratio(collector_step_s),
            "rollout_vs_batch": ratio(rollout_s),
        }

    def close(self) -> None:
        self.pool.close()
