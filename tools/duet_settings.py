"""Two settings of the lockstep duet side by side on an A/A: which makes the worker pairs agree.

    python -m tools.duet_settings --base-tree B --head-tree H --compare pin|wait [--workers 12] [--cells ...]

``pin``: both workers on the same randomly chosen CPUs for a cell of fewer threads than CPUs, against no pinning.
``wait``: OpenMP threads that spin 30000 times before they sleep with 3 ms between samples (the duet's setting),
against threads that sleep at once (``OMP_WAIT_POLICY=PASSIVE``, 1 ms). Fresh worker pairs alternate between the
two settings; each pair gives one median head/base ratio per cell. On an A/A the right answer is 1.0 and the
better setting has the smaller spread between pairs. Kept out of the tests.
"""

from __future__ import annotations

import argparse
import os
import statistics
from pathlib import Path

from gate.meter import duet
from tools.drift import _cell

CELLS = {
    "pin": "g1_motion/assembled/4096/1,g1_walk/handwritten/4096/1",
    "wait": "g1_walk/handwritten/256/2,g1_walk/assembled/4096/2,g1_motion/handwritten/32768/2",
}


def _setting(compare: str, name: str) -> tuple[dict, float, bool]:
    """(environment, settle seconds, pin) of one side of the comparison."""
    if compare == "pin":
        return {}, duet.SETTLE_S, name == "on"
    if name == "on":
        return {"OMP_WAIT_POLICY": "PASSIVE", "GOMP_SPINCOUNT": "30000"}, 0.003, True
    return {"OMP_WAIT_POLICY": "PASSIVE", "GOMP_SPINCOUNT": "0"}, 0.001, True


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tools.duet_settings", description=__doc__.split("\n\n")[0])
    p.add_argument("--base-tree", type=Path, required=True)
    p.add_argument("--head-tree", type=Path, required=True)
    p.add_argument("--compare", choices=sorted(CELLS), required=True)
    p.add_argument("--workers", type=int, default=12, help="worker pairs per setting")
    p.add_argument("--pairs", type=int, default=30)
    p.add_argument("--cells")
    args = p.parse_args(argv)
    cells = [_cell(c) for c in (args.cells or CELLS[args.compare]).split(",")]
    out: dict[tuple[str, str], list[tuple[float, float]]] = {
        (c.label(), n): [] for c in cells for n in ("off", "on")
    }
    for k in range(args.workers):
        for name in ("off", "on") if k % 2 == 0 else ("on", "off"):
            env, settle, pin = _setting(args.compare, name)
            duet.SETTLE_S = settle
            with duet.Duet(args.head_tree, args.base_tree, env={**os.environ, **env}, pin=pin) as pair:
                for c in cells:
                    got = pair.pairs(c, args.pairs)
                    out[(c.label(), name)].append(
                        (
                            statistics.median(x.head_s / x.base_s for x in got),
                            statistics.median(x.base_s for x in got),
                        )
                    )
    for (label, name), rows in out.items():
        r = sorted(m for m, _ in rows)
        print(
            f"{label:44} {args.compare} {name:<3} pair medians: median {statistics.median(r):.3f} range "
            f"[{r[0]:.3f}, {r[-1]:.3f}] sd {statistics.stdev(r):.3f}; base {1e3 * statistics.median(b for _, b in rows):.3f} ms"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
