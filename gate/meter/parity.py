"""Parity of an implementation against its task's reference (spec E5), on fresh snapshots with poisoned outputs,
within the tolerances of the task's meter.py (``gate.meter.subject.tolerance``, read from the base)."""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from gate.meter import subject
from gate.meter.subject import make_inputs
from kernels.spec import TaskPlan


@dataclass(frozen=True, kw_only=True)
class ArrayDiff:
    name: str
    kind: str  # "output" or "state"
    max_abs: float
    max_rel: float
    mismatches: int  # elements outside tolerance (exact for uint8)
    ok: bool


@dataclass(frozen=True, kw_only=True)
class ParityReport:
    task: str
    impl: str
    num_envs: int
    seed: int
    threads: int
    noise_level: float
    arrays: tuple[ArrayDiff, ...]

    @property
    def ok(self) -> bool:
        return all(a.ok for a in self.arrays)

    def to_dict(self) -> dict:
        return {**asdict(self), "ok": self.ok}


def poison(out: dict[str, np.ndarray]) -> None:
    """Fill outputs with values no kernel writes (NaN, or 0xFF for flags) so an unwritten element fails."""
    for arr in out.values():
        arr.fill(np.nan if arr.dtype.kind == "f" else np.iinfo(arr.dtype).max)


def copy(snap: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """An independent copy (state arrays are updated in place, so each implementation needs its own)."""
    return {name: arr.copy() for name, arr in snap.items()}


def diff(
    name: str, kind: str, got: np.ndarray, want: np.ndarray, tolerance: tuple[float, float]
) -> ArrayDiff:
    """``got`` against ``want``: floats within ``tolerance`` = (ATOL, RTOL), others exactly."""
    if got.dtype.kind != "f":
        bad = int(np.count_nonzero(got != want))
        return ArrayDiff(
            name=name, kind=kind, max_abs=float(bad > 0), max_rel=float(bad > 0), mismatches=bad, ok=bad == 0
        )
    g, w = got.astype(np.float64), want.astype(np.float64)
    same = (g == w) | (np.isnan(g) & np.isnan(w))  # equal infinities and NaN on both sides agree
    with np.errstate(invalid="ignore", over="ignore"):
        err = np.where(same, 0.0, np.abs(g - w))
        err = np.where(np.isnan(err), np.inf, err)  # NaN on one side only
        rel = err / np.maximum(np.abs(w), np.finfo(np.float64).tiny)
    atol, rtol = tolerance
    bad = int(np.count_nonzero(err > atol + rtol * np.abs(np.nan_to_num(w, posinf=0.0, neginf=0.0))))
    return ArrayDiff(
        name=name,
        kind=kind,
        max_abs=float(err.max(initial=0.0)),
        max_rel=float(np.where(err == 0, 0.0, rel).max(initial=0.0)),
        mismatches=bad,
        ok=bad == 0,
    )


def compare_on(
    snap: dict[str, np.ndarray],
    *,
    task: str,
    impl: str,
    threads: int | None = None,
    noise_level: float | None = None,
    seed: int = -1,
    plan: TaskPlan | None = None,
) -> ParityReport:
    """Run the reference and ``impl`` on independent copies of ``snap`` (outputs poisoned) and compare."""
    return compare_many(
        snap, task=task, cases=[(impl, threads)], noise_level=noise_level, seed=seed, plan=plan
    )[0]


def compare_many(
    snap: dict[str, np.ndarray],
    *,
    task: str,
    cases: list[tuple[str, int | None]],
    noise_level: float | None = None,
    seed: int = -1,
    plan: TaskPlan | None = None,
    catch: bool = False,
) -> list:
    """``compare_on`` for every (implementation, threads) of ``cases``, the reference run once: each case on
    its own copy of ``snap`` with poisoned outputs. A case that raises propagates, or with ``catch`` takes
    the exception's place in the list (a ``ParityReport`` per case otherwise)."""
    registry = subject.registry()
    tolerance = subject.tolerance(task)
    num_envs = snap[registry.contract(task).inputs[0].name].shape[0]
    ref = registry.load(task, registry.reference(task), num_envs=num_envs, noise_level=noise_level, plan=plan)
    ref_snap = copy(snap)
    poison(ref.outputs)
    want = ref.update_state(ref_snap)
    reports = []
    for impl, threads in cases:
        try:
            fast = registry.load(
                task, impl, num_envs=num_envs, threads=threads, noise_level=noise_level, plan=plan
            )
            fast_snap = copy(snap)
            poison(fast.outputs)
            got = fast.update_state(fast_snap)
        except Exception as exc:
            if not catch:
                raise
            reports.append(exc)
            continue
        contract = fast.contract
        arrays = [diff(s.name, "output", got[s.name], want[s.name], tolerance) for s in contract.outputs]
        arrays += [
            diff(s.name, "state", fast_snap[s.name], ref_snap[s.name], tolerance) for s in contract.state
        ]
        reports.append(
            ParityReport(
                task=task,
                impl=impl,
                num_envs=num_envs,
                seed=seed,
                threads=fast.threads,
                noise_level=fast.noise_level,
                arrays=tuple(arrays),
            )
        )
    return reports


def compare(
    *,
    task: str,
    impl: str,
    num_envs: int,
    seed: int,
    threads: int | None = None,
    noise_level: float | None = None,
    plan: TaskPlan | None = None,
) -> ParityReport:
    """Parity of ``impl`` on the fresh synthetic snapshot ``make_inputs(task, num_envs, seed)``."""
    snap = make_inputs(task, num_envs, seed)
    return compare_on(
        snap, task=task, impl=impl, threads=threads, noise_level=noise_level, seed=seed, plan=plan
    )
