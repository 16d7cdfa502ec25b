"""How far the collector check can be trusted: its verdict on unchanged kernels over many seeds and a long horizon.

    python -m tools.collector_seeds [--seeds 50] [--steps 64] [--num-envs 64] [--json]
    NUMBA_CPU_NAME=x86-64-v3 NUMBA_CPU_FEATURES= python -m tools.collector_seeds   # another code path

For every seed, task and fused implementation: the implementation's collector rolled out ``--steps`` steps with
every kernel call shadowed by the reference (``gate.meter.trajectory``'s open loop), and beside it the
reference's own closed-loop rollout. It prints how many rollouts the open loop flags (a false correctness
reject: the kernels are unchanged), and for each closed-loop horizon K how many rollouts part from the reference's
beyond the check's tolerance within K steps: the closed-loop part of the check can only be as long as the largest
K with none. Slow (about 10 minutes per Numba target here); kept out of the tests.
"""

from __future__ import annotations

import argparse
import json
import os

import numpy as np


def measure(seeds: int, steps: int, num_envs: int) -> list[dict]:
    from gate.meter import trajectory
    from kernels import registry

    rows = []
    for task in registry.TASKS:
        impls = [i for i in registry.available(task) if i != registry.REFERENCE]
        for seed in range(seeds):
            ref = trajectory.rollout(task, registry.REFERENCE, steps=steps, num_envs=num_envs, seed=seed)
            for impl in impls:
                run = trajectory.rollout(task, impl, steps=steps, num_envs=num_envs, seed=seed, shadow=True)
                parted = [
                    bool(trajectory.differences(_first(run, k + 1), _first(ref, k + 1))) for k in range(steps)
                ]
                rows.append(
                    {
                        "task": task,
                        "impl": impl,
                        "seed": seed,
                        "open_loop": run["open_loop"][:1],
                        "closed_loop_parts_at": parted.index(True) if any(parted) else None,
                    }
                )
    return rows


def _first(run: dict, steps: int) -> dict:
    return {k: run[k][:steps] for k in ("reward", "done", "reset", "obs", "resets")}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tools.collector_seeds", description=__doc__.split("\n\n")[0])
    p.add_argument("--seeds", type=int, default=50)
    p.add_argument("--steps", type=int, default=64)
    p.add_argument("--num-envs", type=int, default=64)
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    rows = measure(args.seeds, args.steps, args.num_envs)
    target = os.environ.get("NUMBA_CPU_NAME") or "host"
    if args.json:
        print(json.dumps({"target": target, **vars(args), "rows": rows}))
        return 0
    print(
        f"Numba target {target}: {args.seeds} seeds x {args.steps} steps x {args.num_envs} envs, {len(rows)} rollouts"
    )
    flagged = [r for r in rows if r["open_loop"]]
    print(f"open loop: {len(flagged)} rollout(s) flagged")
    for r in flagged[:5]:
        print(f"  {r['task']} {r['impl']} seed {r['seed']}: {r['open_loop'][0]}")
    parts = np.array(
        [r["closed_loop_parts_at"] if r["closed_loop_parts_at"] is not None else args.steps for r in rows]
    )
    for k in (1, 2, 3, 4, 8, 16, args.steps):
        if k <= args.steps:
            print(
                f"closed loop over {k:>3} steps: {int((parts < k).sum()):>3} of {len(rows)} rollouts part from the reference's"
            )
    return 1 if flagged else 0


if __name__ == "__main__":
    raise SystemExit(main())
