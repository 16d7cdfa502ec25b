"""Paired-ratio summaries from the asv sidecar (``.asv/fusegate/<commit>/paired.jsonl``).

For each cell (commit, task, implementation, num_envs, threads) the pairs of every benchmark process are pooled:
the estimate is the median of impl/hand-written pair ratios, with a 95% confidence interval from a hierarchical
bootstrap (resample the processes, then the pairs within each), so process-to-process drift widens the interval
instead of hiding in it (docs/gate.md, "Statistics").
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from pathlib import Path

import numpy as np

from gate import stats
from gate.ingest.sidecar_records import pair_ratios


def read_pairs(directory: Path) -> dict[tuple, list[np.ndarray]]:
    """cell -> one array of pair ratios per benchmark process."""
    cells: dict[tuple, list[np.ndarray]] = defaultdict(list)
    for path in sorted(directory.glob("*/paired.jsonl")):
        for number, line in enumerate(path.read_text().splitlines(), 1):
            try:
                record = json.loads(line)
                key = (
                    record["commit"],
                    record["task"],
                    record["impl"],
                    record["num_envs"],
                    record["threads"],
                )
                ratios = np.array(pair_ratios(record))
            except (KeyError, TypeError, ValueError, ZeroDivisionError) as exc:
                raise ValueError(f"{path}:{number}: not a paired record ({exc})") from None
            cells[key].append(ratios)
    return dict(cells)


def summarize(directory: Path) -> list[dict]:
    rows = []
    for (commit, task, impl, num_envs, threads), processes in sorted(read_pairs(directory).items()):
        summary = stats.summarize(processes, what="paired ratios")
        median, low, high = (math.exp(x) for x in (summary.center, summary.low, summary.high))
        rows.append(
            {
                "commit": commit,
                "task": task,
                "impl": impl,
                "num_envs": num_envs,
                "threads": threads,
                "processes": len(processes),
                "pairs": int(sum(len(p) for p in processes)),
                "median_ratio": median,
                "ci_low": low,
                "ci_high": high,
                "ci_width_pct": 100 * (high - low) / median,
            }
        )
    return rows
