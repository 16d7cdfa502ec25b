"""Per-call times inside the collector loop (``fusegate collect --calls``).

The phase table says how long each phase takes; this says which calls make it up, timed where they run: right
after the physics step or the policy forward pass, on caches those have flushed. Each call in ``CALLS`` is
wrapped, for the timed window only, in a timer that adds about a microsecond per call; the wrappers are
removed afterwards. ``kernel.update_state`` includes ``kernel._run`` (the implementation's compiled call) and
the checks at the boundary (in the loop, of values only: the collector checks the layout once).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from kernels.sim.collector import Collector

# (owner, method): owners are the collector's parts, in the order a step calls them
CALLS = (
    ("policy", "act"),
    ("replay", "write_step"),
    ("env", "apply_actions"),
    ("env", "take_pending"),
    ("env", "begin_reset"),
    ("sim", "forward_rows"),
    ("sim", "step"),
    ("env", "fill_snapshot"),
    ("kernel", "update_state"),
    ("kernel", "_run"),
    ("replay", "write_outcome"),
    ("env", "advance"),
)


def _owner(collector: Collector, name: str) -> object:
    return collector.env.sim if name == "sim" else getattr(collector, name)


@contextlib.contextmanager
def timed_calls(collector: Collector) -> Iterator[dict[str, list[float]]]:
    """Wrap every call of ``CALLS`` in a timer while the block runs; yields {"owner.method": [seconds]}."""
    samples: dict[str, list[float]] = {}
    patched = []
    clock = time.perf_counter
    try:
        for owner_name, attr in CALLS:
            owner = _owner(collector, owner_name)
            if attr in vars(owner):
                raise RuntimeError(f"{owner_name}.{attr} is already wrapped")
            call, times = getattr(owner, attr), samples.setdefault(f"{owner_name}.{attr}", [])

            def timed(*args, _call=call, _times=times, **kwargs):
                start = clock()
                try:
                    return _call(*args, **kwargs)
                finally:
                    _times.append(clock() - start)

            setattr(owner, attr, timed)
            patched.append((owner, attr))
        yield samples
    finally:
        for owner, attr in patched:
            delattr(owner, attr)  # the class's method shows through again


def summary(samples: dict[str, list[float]], steps: int, num_envs: int) -> dict[str, dict[str, float]]:
    """Per call: calls per step, median and p95 of one call (us), and its mean cost per env-step (us)."""
    out = {}
    for name, times in samples.items():
        t = np.asarray(times) * 1e6
        out[name] = {
            "per_step": len(t) / steps,
            "median_us": float(np.median(t)) if len(t) else 0.0,
            "p95_us": float(np.percentile(t, 95)) if len(t) else 0.0,
            "us_per_env_step": float(t.sum()) / steps / num_envs,
        }
    return out
