"""Why 1-thread medians are bimodal between processes: many fresh processes, each timed and inspected.

    python -m benchmarks.bimodal --processes 24 [--task g1_walk --impl handwritten --num-envs 32768]

Each child process builds the hot slice's snapshot, times ``update_state`` at 1 thread (``--samples`` samples
of >= 1 ms) and reports what could explain its median: the CPU it ran on, the steal and other-process time of
that CPU during the timing (``/proc/stat``), the CPU's clock (``/proc/cpuinfo``), how much of its memory is on
transparent huge pages (``/proc/self/smaps_rollup``; NumPy asks for them with ``madvise`` on large arrays), the
arrays' offsets within a page, and context switches. The arms alternate between processes, so drift over time
falls on every arm alike: ``--arms`` picks them from ``default`` (NumPy's huge-page advice on), ``nohuge`` (off),
``cpu0`` / ``cpu1`` (pinned to one CPU). The parent splits the medians of each arm into a fast and a slow mode
at their widest gap and prints, per arm and mode, the averages of every candidate cause.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time

from gate.meter.subject import make_inputs

ARMS = ("default", "nohuge", "cpu0", "cpu1", "relayout")


def _cpu_times(cpu: int) -> list[int]:
    with open("/proc/stat") as f:
        for line in f:
            if line.startswith(f"cpu{cpu} "):
                return [int(x) for x in line.split()[1:]]
    return []


def _on_cpu() -> int:
    with open("/proc/self/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[36])  # field 39, processor


def _mhz(cpu: int) -> float | None:
    with open("/proc/cpuinfo") as f:
        blocks = f.read().split("\n\n")
    for b in blocks:
        fields = {
            k.strip(): v.strip() for k, v in (line.split(":", 1) for line in b.splitlines() if ":" in line)
        }
        if fields.get("processor") == str(cpu) and "cpu MHz" in fields:
            return float(fields["cpu MHz"])
    return None


def _relayout(args: argparse.Namespace) -> dict:
    """One process, ``--layouts`` fresh allocations of the snapshot (new pages, new offsets), each timed, with
    the first allocation timed again between them: if the time moves with the allocation while the first one's
    repeats stay put, the layout (where the arrays landed) decides it, not the moment."""
    import numba
    import numpy as np

    import kernels
    from gate.meter.placement import first_touch

    numba.set_num_threads(1)
    source = make_inputs(args.task, args.num_envs, seed=0)
    kernel = kernels.load(args.task, args.impl, num_envs=args.num_envs, threads=1)

    def timed(snap) -> float:
        for _ in range(3):
            kernel.update_state(snap)
        samples = []
        for _ in range(args.samples // 3):
            t0 = time.perf_counter()
            kernel.update_state(snap)
            samples.append(time.perf_counter() - t0)
        return statistics.median(samples)

    rng = np.random.default_rng()
    first = first_touch(source, rng=rng)
    again, layouts = [timed(first)], [timed(first)]
    for _ in range(args.layouts - 1):
        layouts.append(timed(first_touch(source, rng=rng)))
        again.append(timed(first))
    return {
        "arm": "relayout",
        "layouts_ms": [x * 1e3 for x in layouts],
        "first_again_ms": [x * 1e3 for x in again],
    }


def _huge_kib() -> int:
    with open("/proc/self/smaps_rollup") as f:
        for line in f:
            if line.startswith("AnonHugePages:"):
                return int(line.split()[1])
    return 0


def child(args: argparse.Namespace) -> dict:
    if args.arm == "relayout":
        return _relayout(args)
    import numpy as np

    if args.arm == "nohuge":
        np._core.multiarray._set_madvise_hugepage(False)
    if args.arm.startswith("cpu"):
        os.sched_setaffinity(0, {int(args.arm[3:])})
    import numba

    import kernels
    from gate.meter.placement import first_touch

    numba.set_num_threads(1)
    snap = first_touch(make_inputs(args.task, args.num_envs, seed=0))
    kernel = kernels.load(args.task, args.impl, num_envs=args.num_envs, threads=1)
    for _ in range(5):
        kernel.update_state(snap)
    t0 = time.perf_counter()
    kernel.update_state(snap)
    loops = max(1, int(1e-3 / max(time.perf_counter() - t0, 1e-9)) + 1)
    cpu = _on_cpu()
    before, mhz_before, usage = _cpu_times(cpu), _mhz(cpu), resource.getrusage(resource.RUSAGE_SELF)
    samples = []
    for _ in range(args.samples):
        t0 = time.perf_counter()
        for _ in range(loops):
            kernel.update_state(snap)
        samples.append((time.perf_counter() - t0) / loops)
    after, end_usage = _cpu_times(cpu), resource.getrusage(resource.RUSAGE_SELF)
    ticks = [b - a for a, b in zip(before, after, strict=False)] or [0] * 8
    total = max(sum(ticks), 1)
    arrays = [a for a in snap.values() if a.nbytes >= 1 << 20]
    return {
        "arm": args.arm,
        "median_s": statistics.median(samples),
        "cpu": cpu,
        "cpu_end": _on_cpu(),
        "steal_pct": 100 * ticks[7] / total,
        "idle_pct": 100 * (ticks[3] + ticks[4]) / total,
        "mhz": statistics.mean(x for x in (mhz_before, _mhz(cpu)) if x is not None) if mhz_before else None,
        "huge_mib": _huge_kib() / 1024,
        "page_offsets": sorted({a.ctypes.data % 4096 for a in arrays}),
        "involuntary_switches": end_usage.ru_nivcsw - usage.ru_nivcsw,
    }


def _split(values: list[float]) -> float | None:
    """The threshold at the widest relative gap of the sorted values, if that gap is over 3%."""
    v = sorted(values)
    if len(v) < 4:
        return None
    gaps = [(v[i + 1] / v[i], i) for i in range(len(v) - 1)]
    ratio, i = max(gaps)
    return (v[i] + v[i + 1]) / 2 if ratio > 1.03 else None


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--processes", type=int, default=24, help="child processes in all (default 24)")
    p.add_argument("--task", default="g1_walk")
    p.add_argument("--impl", default="handwritten")
    p.add_argument("--num-envs", type=int, default=32768)
    p.add_argument("--samples", type=int, default=60, help="timed samples per process (default 60)")
    p.add_argument("--arms", default="default,nohuge", help=f"comma-separated, of {', '.join(ARMS)}")
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--arm", default="default", help=argparse.SUPPRESS)
    p.add_argument("--json", metavar="FILE", help="also write every process's record here")
    p.add_argument("--layouts", type=int, default=6, help="relayout arm: allocations per process (default 6)")
    args = p.parse_args(argv)
    if args.child:
        print(json.dumps(child(args)))
        return 0
    arms = args.arms.split(",")
    if unknown := set(arms) - set(ARMS):
        p.error(f"unknown arms {sorted(unknown)}; known: {', '.join(ARMS)}")
    rows = []
    for i in range(args.processes):
        arm = arms[i % len(arms)]
        cmd = [
            sys.executable,
            "-m",
            "benchmarks.bimodal",
            "--child",
            "--arm",
            arm,
            "--task",
            args.task,
            "--impl",
            args.impl,
            "--num-envs",
            str(args.num_envs),
            "--samples",
            str(args.samples),
            "--layouts",
            str(args.layouts),
        ]
        out = subprocess.run(cmd, capture_output=True, text=True, check=True)
        rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
        r = rows[-1]
        if arm == "relayout":
            print(
                f"{i + 1:3d}/{args.processes} layouts {' '.join(f'{x:.1f}' for x in r['layouts_ms'])} ms; "
                f"first again {' '.join(f'{x:.1f}' for x in r['first_again_ms'])}",
                file=sys.stderr,
            )
            continue
        print(
            f"{i + 1:3d}/{args.processes} {arm:8s} {r['median_s'] * 1e3:8.3f} ms  cpu {r['cpu']}  "
            f"steal {r['steal_pct']:4.1f}%  huge {r['huge_mib']:6.1f} MiB",
            file=sys.stderr,
        )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    print(_report(rows, args))
    return 0


def _report(rows: list[dict], args: argparse.Namespace) -> str:
    head = (
        f"{args.task}/{args.impl} at {args.num_envs} envs, 1 thread, {args.samples} samples per process\n"
        f"{'arm':8s} {'mode':5s} {'n':>3s} {'median ms':>10s} {'spread':>7s} {'steal %':>8s} "
        f"{'idle %':>7s} {'MHz':>7s} {'huge MiB':>9s} {'cpu0/cpu1':>9s} {'inv.sw':>7s}"
    )
    lines = [head]
    relayout = [r for r in rows if r["arm"] == "relayout"]
    if relayout:

        def spread(xs):
            return max(xs) / min(xs) - 1

        lines.append(
            f"relayout: {len(relayout)} processes; within a process, fresh layouts spread "
            f"{statistics.median(spread(r['layouts_ms']) for r in relayout):.0%} (median), the first layout timed "
            f"again {statistics.median(spread(r['first_again_ms']) for r in relayout):.0%}; between processes, "
            f"first layouts {spread([r['layouts_ms'][0] for r in relayout]):.0%}"
        )
        rows = [r for r in rows if r["arm"] != "relayout"]
    for arm in dict.fromkeys(r["arm"] for r in rows):
        mine = [r for r in rows if r["arm"] == arm]
        cut = _split([r["median_s"] for r in mine])
        modes = (
            {"all": mine}
            if cut is None
            else {
                "fast": [r for r in mine if r["median_s"] < cut],
                "slow": [r for r in mine if r["median_s"] >= cut],
            }
        )
        for mode, rs in modes.items():
            times = [r["median_s"] * 1e3 for r in rs]
            mhz = [r["mhz"] for r in rs if r["mhz"]]
            lines.append(
                f"{arm:8s} {mode:5s} {len(rs):3d} {statistics.median(times):10.3f} "
                f"{(max(times) / min(times) - 1):7.1%} {statistics.mean(r['steal_pct'] for r in rs):8.2f} "
                f"{statistics.mean(r['idle_pct'] for r in rs):7.1f} "
                f"{(statistics.mean(mhz) if mhz else float('nan')):7.0f} "
                f"{statistics.mean(r['huge_mib'] for r in rs):9.1f} "
                f"{sum(r['cpu'] == 0 for r in rs):4d}/{sum(r['cpu'] == 1 for r in rs):<4d} "
                f"{statistics.mean(r['involuntary_switches'] for r in rs):7.1f}"
            )
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
