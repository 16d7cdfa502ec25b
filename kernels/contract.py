"""The hot-slice array contract (spec section E): names, shapes and dtypes, checked at the boundary.

Every implementation of a task takes and writes exactly these arrays. A shape is a tuple whose entries are
either fixed sizes or the symbols ``"N"`` (number of envs) and ``"T"`` (motion-library frames). Checking a
snapshot happens before any output is touched, so a refused call changes nothing.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from kernels.spec import TaskPlan

F32 = np.dtype(np.float32)
F64 = np.dtype(np.float64)
U8 = np.dtype(np.uint8)
I32 = np.dtype(np.int32)

Dim = int | str


@dataclass(frozen=True, kw_only=True)
class ArraySpec:
    name: str
    shape: tuple[Dim, ...]
    dtype: np.dtype
    indexes: str | None = None  # "T": every value is an index into the T axis, checked to lie in [0, T-1]

    def concrete_shape(self, *, num_envs: int, frames: int | None = None) -> tuple[int, ...]:
        sizes = {"N": num_envs, "T": frames}
        return tuple(sizes[d] if isinstance(d, str) else d for d in self.shape)

    def describe(self) -> str:
        return f"{self.dtype.name}[{', '.join(str(d) for d in self.shape)}]"


@dataclass(frozen=True, kw_only=True)
class TaskContract:
    """What one ``update_state`` call of a task reads (inputs), updates in place (state) and writes (outputs)."""

    task: str
    inputs: tuple[ArraySpec, ...]
    state: tuple[ArraySpec, ...]
    outputs: tuple[ArraySpec, ...]
    terms: tuple[str, ...]

    @property
    def snapshot(self) -> tuple[ArraySpec, ...]:
        return self.inputs + self.state

    def check_snapshot(self, snap: Mapping[str, np.ndarray], *, num_envs: int) -> None:
        """Raise ``ValueError`` naming the first array that breaks the contract.

        This runs on every call, so the common case is a tight loop over precomputed expectations; the
        detailed diagnosis only runs once something is wrong.
        """
        try:
            fixed, per_frame = self._expectations(num_envs)
            for name, dtype, shape, strides, in_place in fixed:
                arr = snap[name]
                if not (
                    type(arr) is np.ndarray
                    and arr.shape == shape
                    and arr.strides == strides  # C-contiguous (a faster test than arr.flags)
                    and arr.dtype == dtype
                    and (not in_place or arr.flags.writeable)
                ):
                    raise LookupError
            if per_frame:
                frames = snap[per_frame[0][0]].shape[0]
                for name, dtype, shape in per_frame:
                    arr = snap[name]
                    if not (
                        type(arr) is np.ndarray
                        and arr.dtype == dtype
                        and arr.shape == (frames, *shape)
                        and frames > 0
                        and arr.flags.c_contiguous
                    ):
                        raise LookupError
                self._check_index_values(snap, frames)
        except (LookupError, TypeError, AttributeError, IndexError):
            # Raises for any real breach; returns for the rare valid layouts the fast test does not cover
            # (C-contiguous arrays whose size-1 dimensions carry unusual strides).
            self._explain(snap, num_envs=num_envs)

    def check_values(self, snap: Mapping[str, np.ndarray], *, num_envs: int) -> None:
        """The checks of ``check_snapshot`` that depend on the values, not the layout: every motion-frame index
        lies in [0, T - 1]. For a caller whose buffers passed ``check_snapshot`` once and only their values
        change between calls. Raises ``ValueError`` as ``check_snapshot`` does."""
        if not self._index_arrays:
            return
        _, per_frame = self._expectations(num_envs)
        try:
            self._check_index_values(snap, snap[per_frame[0][0]].shape[0])
        except LookupError:
            self._explain(snap, num_envs=num_envs)

    def _check_index_values(self, snap: Mapping[str, np.ndarray], frames: int) -> None:
        for name in self._index_arrays:
            if not self._all_in_range(snap[name], frames):
                raise LookupError

    @functools.cached_property
    def _all_in_range(self):
        """``kernels.scalar.all_in_range``, imported on first use (a contract, a task's spec, imports no Numba)
        and kept: the check runs on every call."""
        from kernels.scalar import all_in_range

        return all_in_range

    @functools.cache  # noqa: B019 - contracts are module-level constants, one per task
    def _expectations(self, num_envs: int) -> tuple[tuple, tuple]:
        """(name, dtype, shape, strides, in_place) of per-env arrays; (name, dtype, shape after T) of the rest."""
        fixed = tuple(
            (s.name, s.dtype, shape, _c_strides(shape, s.dtype.itemsize), s in self.state)
            for s in self.snapshot
            if "T" not in s.shape
            for shape in [s.concrete_shape(num_envs=num_envs)]
        )
        per_frame = tuple((s.name, s.dtype, s.shape[1:]) for s in self.snapshot if "T" in s.shape)
        assert all(s.shape[0] == "T" for s in self.snapshot if "T" in s.shape)
        return fixed, per_frame

    @functools.cached_property
    def _index_arrays(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.snapshot if s.indexes == "T")

    def _explain(self, snap: Mapping[str, np.ndarray], *, num_envs: int) -> None:
        if not isinstance(snap, Mapping):
            raise ValueError(
                f"{self.task}: the snapshot must be a dict of arrays (spec E), got {type(snap).__name__}"
            )
        missing = [s.name for s in self.snapshot if s.name not in snap]
        if missing:
            raise ValueError(
                f"{self.task}: snapshot is missing {', '.join(missing)}; "
                "build one with make_inputs(num_envs, seed) of the task's meter.py"
            )
        frames: int | None = None
        for spec in self.snapshot:
            arr = snap[spec.name]
            if (
                frames is None
                and "T" in spec.shape
                and isinstance(arr, np.ndarray)
                and arr.ndim == len(spec.shape)
            ):
                frames = arr.shape[spec.shape.index("T")]
            _check_array(self.task, spec, arr, num_envs=num_envs, frames=frames, in_place=spec in self.state)
        for name in self._index_arrays:
            lo, hi = int(snap[name].min()), int(snap[name].max())
            if lo < 0 or hi >= frames:
                raise ValueError(
                    f"{self.task}: array {name!r} holds frame indexes, so its values must lie in [0, T - 1] = "
                    f"[0, {frames - 1}] (the library has T = {frames} frames), got values from {lo} to {hi}; "
                    "wrap or resample them before the call"
                )

    def for_plan(self, plan: TaskPlan) -> TaskContract:
        """This contract with the outputs a plan writes: one array per observation group, one log per reward."""
        outputs = (
            ArraySpec(name="reward", shape=("N",), dtype=F32),
            ArraySpec(name="done", shape=("N",), dtype=U8),
            *(ArraySpec(name=g.name, shape=("N", plan.width(g.name)), dtype=F32) for g in plan.observations),
            ArraySpec(name="term_means", shape=(len(plan.rewards),), dtype=F64),
        )
        return dataclasses.replace(self, outputs=outputs, terms=plan.reward_names)

    def allocate_outputs(self, *, num_envs: int) -> dict[str, np.ndarray]:
        return {s.name: np.empty(s.concrete_shape(num_envs=num_envs), s.dtype) for s in self.outputs}


def _c_strides(shape: tuple[int, ...], itemsize: int) -> tuple[int, ...]:
    return np.empty(shape, dtype=f"V{itemsize}").strides


def _check_array(
    task: str, spec: ArraySpec, arr: object, *, num_envs: int, frames: int | None, in_place: bool
) -> None:
    where = f"{task}: array {spec.name!r}"
    if not isinstance(arr, np.ndarray):
        raise ValueError(f"{where} must be a numpy.ndarray {spec.describe()}, got {type(arr).__name__}")
    if arr.dtype != spec.dtype:
        raise ValueError(
            f"{where} must have dtype {spec.dtype.name}, got {arr.dtype.name}; "
            f"convert it with .astype(np.{spec.dtype.name})"
        )
    expected = spec.concrete_shape(num_envs=num_envs, frames=frames if frames is not None else -1)
    if len(arr.shape) != len(expected) or any(
        e not in (-1, a) for e, a in zip(expected, arr.shape, strict=True)
    ):
        shown = tuple("T" if e == -1 else e for e in expected)
        raise ValueError(
            f"{where} must have shape {shown} (N = {num_envs} envs, as the kernel was loaded), got {arr.shape}"
        )
    if "T" in spec.shape and arr.shape[spec.shape.index("T")] == 0:
        raise ValueError(f"{where} has no frames (T = 0); a library of frames needs at least one")
    if not arr.flags.c_contiguous:
        raise ValueError(f"{where} must be C-contiguous; pass np.ascontiguousarray({spec.name})")
    if in_place and not arr.flags.writeable:
        raise ValueError(f"{where} is state updated in place, so it must be writeable; pass a copy")
