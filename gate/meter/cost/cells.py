"""What a cost pass measures: its cells (one call of ``update_state``, or one collector step) and their costs."""

from __future__ import annotations

from dataclasses import asdict, dataclass

METRICS = {  # what a cost cell reports per call, and its unit
    "instructions": "instructions",
    "l1_misses": "misses",
    "ll_misses": "misses",
    "estimated_cycles": "cycles",
}
CALLS = 3  # measured calls per cell, after one warm call; every call is dumped on its own


UPDATE_STATE, COLLECTOR = "update_state", "collector"  # what a cell measures: one call, or one collector step


@dataclass(frozen=True, kw_only=True, order=True)
class Cell:
    task: str
    impl: str
    num_envs: int
    kind: str = UPDATE_STATE

    @property
    def label(self) -> str:
        cell = f"{self.task}/{self.impl}/{self.num_envs}"
        return cell if self.kind == UPDATE_STATE else f"{self.kind}:{cell}"


@dataclass(frozen=True, kw_only=True)
class CellCost:
    """Per-call costs of one cell (the measured calls' total over their count), or the error that stopped it."""

    task: str
    impl: str
    num_envs: int
    kind: str = UPDATE_STATE
    calls: int = 0
    instructions: float | None = None
    l1_misses: float | None = None
    ll_misses: float | None = None
    estimated_cycles: float | None = None
    # (max - min) / mean of the calls' instructions. Calls differ in work, not by noise: state arrays evolve in
    # place and envs reset, the same way in every process (the first measured call of a walking task's kernel
    # at 4096 envs runs 1.1% more instructions than the next two).
    spread: float | None = None
    error: str = ""

    def to_dict(self) -> dict:
        return asdict(self)
