"""What every row kind reads: one machine and placement's cells of head (and base), the policy, the floors."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from sqlalchemy.orm import Session

from gate.domain.vocabulary import Kind
from gate.evaluate.cells import Cells
from gate.policy import Policy
from gate.store import queries


def cost_design(metric: str) -> str:
    """The calibration design of a cost metric (one floor per metric: L1 misses are far noisier than Ir)."""
    return f"cost:{metric}"


class NoiseFloors:
    """The stored A/A calibrations of some machines (every machine when ``machines`` is None)."""

    def __init__(self, session: Session | None = None, machines: Iterable[str] | None = None, *, by=None):
        self._by = dict(by or {})
        if session is not None:
            self._by |= {
                (m, c.design, c.threads): c for m, c in queries.calibrations(session, machines=machines)
            }

    def cost_fail_margin(self, machine: str, metric: str, margin: float) -> float:
        """The cost signal's fail threshold: the policy's margin, or the machine's A/A floor of that metric if larger."""
        cal = self._by.get((machine, cost_design(metric), 1))
        return margin if cal is None else max(margin, cal.noise_floor)

    def fail_margin(self, machine: str, threads: int, margin: float) -> tuple[float, str]:
        """The margin a cross-process fail must clear: the policy's, or the machine's A/A noise floor if larger."""
        cal = self._by.get((machine, "unpaired", threads))
        if cal is None or cal.noise_floor <= margin:
            return margin, ""
        return cal.noise_floor, f"a fail must clear the machine's A/A noise floor {cal.noise_floor:.1%}"


@dataclass(kw_only=True)
class Context:
    """One machine and placement of an evaluation, as each row kind's ``rows(context)`` reads it."""

    machine: str
    placement: str  # the placement's label, shown in the rows' detail
    cells: Cells  # the head's
    policy: Policy
    compare: tuple[str, ...]  # the implementations judged against the baseline (the policy's, plus --impl)
    floors: NoiseFloors = field(default_factory=NoiseFloors)
    versus_base: bool = (
        False  # head-vs-base rows: a base other than the head, whose cells the head does not reuse
    )
    base: Cells | None = None  # the base's cells on this machine and placement (None: it has none)
    base_sha: str = ""
    lockstep: bool = False  # the head was timed against this base in lockstep (the AgainstBase suites)
    # kernels ("task/impl") whose sources every run of head and base here recorded as the same (policy
    # same_sources_pass): their head-vs-base rows pass without time
    same_sources: dict[str, str] = field(default_factory=dict)
    # kernels ("task/impl") whose id every run of head and base here recorded, and whose ids differ: the head
    # changed their sources (whatever the policy's same_sources_pass)
    changed: frozenset[str] = frozenset()
    dropped: list[str] = field(default_factory=list)  # base cells the head's profile no longer has

    def where(self, kind: Kind, task: str, impl: str, baseline: str, n: int, t: int) -> dict:
        """A row's cell on this machine and placement: the fields every measured row kind starts from."""
        return dict(
            machine=self.machine,
            kind=kind,
            task=task,
            impl=impl,
            baseline=baseline,
            num_envs=n,
            threads=t,
            detail=self.placement,
        )
