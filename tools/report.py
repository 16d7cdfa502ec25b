"""docs/measurements.md, generated: every measured figure the docs quote, from the outputs of the commands that
measured them.

    python -m tools.report record --kind KIND --question Q [--title T] NAME -- COMMAND ...  # keep its output
    python -m tools.report render                                              # docs/measurements.md

``record`` runs COMMAND (a measurement tool's ``--json`` output, or any command to time) and keeps its output
in ``docs/measurements/NAME.json`` with the command line, the machine (CPU model, CPUs), the date and the
question it answers (``--question``, QUESTIONS). ``render`` writes docs/measurements.md from every kept record,
grouped by question, in name order; a test fails when a doc quotes a figure that is not in it. A record that a
newer one supersedes is deleted (its figures stay in the commit that recorded them): the file keeps the current
figure of each measured thing once. Kinds: ``scenarios``, ``drift``, ``duet_settings``, ``collector_seeds``,
``plan`` (each renders its tool's JSON), ``rows`` (any tool's JSON rows as a table) and ``timed`` (the
command's wall time and exit code).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import shlex
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RECORDS = ROOT / "docs" / "measurements"
OUT = ROOT / "docs" / "measurements.md"
FORMAT = 1
# what a user asks, in the order the file answers it: key (``--question``) -> its section's heading
QUESTIONS = {
    "accuracy": "How right the verdicts are",
    "duration": "How long a verdict takes",
    "collector": "How the collector check holds",
    "ci": "What CI costs",
}


def _machine() -> dict:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        text = ""
    model = next((ln.split(":", 1)[1].strip() for ln in text.splitlines() if ln.startswith("model name")), "")
    return {"cpu": model, "cpus": os.cpu_count()}


def record(
    name: str,
    kind: str,
    title: str,
    command: list[str],
    note: str = "",
    *,
    question: str = "accuracy",
    output: Path | None = None,
) -> Path:
    """Run ``command`` and keep its output; with ``output``, keep what ``command`` wrote there when it ran (a run
    of hours, watched on its stderr) without running it again."""
    t0 = time.monotonic()
    if output is not None:
        done = subprocess.CompletedProcess(command, 0, output.read_text(), "")
    else:
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    seconds = time.monotonic() - t0
    if kind == "timed":
        data = {"seconds": round(seconds), "exit": done.returncode}
    else:
        try:
            data = json.loads(done.stdout)
        except json.JSONDecodeError:
            raise SystemExit(  # noqa: B904 (the command's output is the message)
                f"{' '.join(command)} printed no JSON (exit {done.returncode}):\n{done.stderr[-2000:]}"
            )
    out = {
        "format": FORMAT,
        "name": name,
        "kind": kind,
        "title": title or name,
        "command": shlex.join(command),
        "machine": _machine(),
        "date": datetime.date.today().isoformat(),
        "question": question,
        "data": data,
    }
    if note:
        out["note"] = note
    RECORDS.mkdir(parents=True, exist_ok=True)
    path = RECORDS / f"{name}.json"
    path.write_text(json.dumps(out, indent=1) + "\n")
    return path


# --- rendering -------------------------------------------------------------------------------------------------


def _table(columns: list[str], rows: list[list]) -> list[str]:
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return lines


def _confusion(confusion: list[list]) -> list[str]:
    """Expected against actual over the scored scenarios, by group (A/A, improvement, regression) where the
    record has one: one line."""
    cells = [
        f"{c[0] + ' ' if len(c) == 4 else ''}{c[-3]} -> {c[-2]}: {c[-1]}"
        for c in sorted(confusion, key=lambda c: [str(x) for x in c])
    ]
    return ["Confusion over the scored scenarios (expected -> actual: runs): " + "; ".join(cells) + "."]


def _scenarios(data: dict) -> list[str]:
    """Per scenario over the runs: the verdicts, the head's wall time (measurement and rounds), the rows that
    failed by time, the largest head/base time and cost ratios and the first line of its last head."""
    rows = data["rows"]
    asv = [r for r in rows if r["deciding"][:1] and r["deciding"][0].startswith("asv continuous exited")]
    if data.get("judge") == "asv continuous" or (rows and len(asv) == len(rows)):
        return _asv_scenarios(data)
    lines = []
    plan = data.get("plan")
    # a run stopped part-way (python -m tools.scenarios --resume goes on with it)
    if plan and len(rows) < len(plan):
        ran = {(r["run"], r.get("step")) for r in rows}
        missing = [f"{name} (run {run})" for run, step, name in plan if (run, step) not in ran]
        shown = ", ".join(missing[:8]) + (f" and {len(missing) - 8} more" if len(missing) > 8 else "")
        lines += [f"It holds {len(rows)} of the {len(plan)} heads of its plan; not run: {shown}.", ""]
    table = []
    for n in dict.fromkeys(r["scenario"] for r in rows):
        mine = [r for r in rows if r["scenario"] == n]
        verdicts = ", ".join(r["actual"] for r in mine)
        secs = sorted(r["seconds"] for r in mine)
        expected = mine[0]["expected"] + (" (effect)" if mine[0]["effect"] else "")
        time_fails = sum(r["time_fails"] for r in mine)
        largest = mine[-1]["largest"] or "-"
        first = f"`{mine[-1]['headline']}`" if mine[-1].get("headline") else "-"
        table.append([n, expected, verdicts, f"{secs[0]:.0f}-{secs[-1]:.0f}", time_fails, largest, first])
    lines += _table(
        ["scenario", "expected", "verdicts", "seconds", "failed by time", "largest (last run)", "first line"],
        table,
    )
    lines += ["", *_confusion(data["confusion"])]
    blamed = [(r["scenario"], r["run"], b) for r in rows for b in r.get("blamed", [])]
    if any("blamed" in r for r in rows):
        lines[-1] += f" Fail rows on an implementation the change does not touch: {len(blamed)}."
        if blamed:
            lines += ["", *(f"- {n} (run {k}): `{b}`" for n, k, b in blamed)]
    return lines


def _asv_scenarios(data: dict) -> list[str]:
    rows = data["rows"]
    lines = [
        "Per scenario, each run from a fresh clone: what `asv continuous --interleave-rounds HEAD~1 HEAD` answered"
        " (reject: a benchmark reported slower; changed: only faster; approve: none changed), its wall time"
        " (environment, both commits, comparison) and the benchmarks it reported as changed.",
        "",
    ]
    table = []
    for n in dict.fromkeys(r["scenario"] for r in rows):
        mine = [r for r in rows if r["scenario"] == n]
        secs = sorted(r["seconds"] for r in mine)
        changed = sum(len(r["deciding"]) - 1 for r in mine)
        exits = ", ".join(r["deciding"][0].rsplit(" ", 1)[-1] for r in mine)
        table.append(
            [
                n,
                mine[0]["expected"],
                ", ".join(r["actual"] for r in mine),
                exits,
                f"{secs[0]:.0f}-{secs[-1]:.0f}",
                changed,
            ]
        )
    lines += _table(
        ["scenario", "expected", "asv's answers", "exit codes", "seconds", "rows reported changed"], table
    )
    lines += ["", *_confusion(data["confusion"])]
    seen: Counter = Counter()
    changed = []
    for r in rows:
        seen[r["scenario"]] += 1
        changed += [f"- {r['scenario']}, head {seen[r['scenario']]}: `{d}`" for d in r["deciding"][1:]]
    if changed:
        lines += ["", "Benchmarks asv reported as changed (head n: the scenario's n-th head):", "", *changed]
    return lines


def _drift(data: dict) -> list[str]:
    rows = [
        [k, f"{v['median']:.3f}", f"{v['min']:.3f}-{v['max']:.3f}", f"{v['outside_5pct']} of {v['n']}"]
        for k, v in data["summary"].items()
    ]
    lines = _table(["design", "median", "range", "outside [0.95, 1.05]"], rows)
    return ["Head/base of an A/A over the sessions after the first (1.0 is right):", "", *lines]


def _duet_settings(data: dict) -> list[str]:
    rows = [
        [r["cell"], r["setting"], f"{r['min']:.3f}-{r['max']:.3f}", f"{r['sd']:.3f}", f"{r['base_ms']:.3f}"]
        for r in data["rows"]
    ]
    return _table(["cell", "setting", "per-pair medians", "sd", "base ms"], rows)


def _collector_seeds(data: dict) -> list[str]:
    rows = data["rows"]
    parts = sorted(
        data["steps"] if r["closed_loop_parts_at"] is None else r["closed_loop_parts_at"] for r in rows
    )
    flagged = sum(bool(r["open_loop"]) for r in rows)
    horizons = [k for k in (1, 2, 3, 4, 8, 16, data["steps"]) if k <= data["steps"]]
    parted = [["rollouts parted", *(sum(p < k for p in parts) for k in horizons)]]
    return [
        f"Numba target {data['target']}: {data['seeds']} seeds x {data['steps']} steps x {data['num_envs']} envs, "
        f"{len(rows)} rollouts; the open loop flagged {flagged}.",
        "",
        *_table(["closed loop over steps", *map(str, horizons)], parted),
    ]


def _plan(data: dict) -> list[str]:
    places = "; ".join(
        f"{p['placement']} (CPUs {p['cpus']}, memory {p['mem']}, threads {','.join(map(str, p['threads']))})"
        for p in data["placements"]
    )
    return [
        f"{data['topology']}, {data['profile']} profile: {data['head_s'] / 60:.1f} min per head, "
        f"{data['base_s'] / 60:.1f} min per base. Placements: {places}."
    ]


def _cell(value) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, list | tuple):
        return ",".join(map(_cell, value))
    return "-" if value is None else str(value)


def _rows(data) -> list[str]:
    """A tool's JSON rows (a list of flat objects, or an object holding one under ``rows``) as a table."""
    rows = data["rows"] if isinstance(data, dict) else data
    columns = list(dict.fromkeys(k for r in rows for k, v in r.items() if not isinstance(v, dict)))
    return _table(columns, [[_cell(r.get(c)) for c in columns] for r in rows])


def _timed(data: dict) -> list[str]:
    return [f"{data['seconds']} s ({data['seconds'] / 60:.1f} min), exit {data['exit']}."]


KINDS = {
    "scenarios": _scenarios,
    "drift": _drift,
    "duet_settings": _duet_settings,
    "collector_seeds": _collector_seeds,
    "plan": _plan,
    "timed": _timed,
    "rows": _rows,
}


def render() -> str:
    records = {p.name: json.loads(p.read_text()) for p in sorted(RECORDS.glob("*.json"))}
    for name, r in records.items():
        if r.get("question") not in QUESTIONS:
            raise SystemExit(
                f"docs/measurements/{name}: question {r.get('question')!r} is not one of "
                f'{", ".join(QUESTIONS)}; set its "question" to the one it answers'
            )
    lines = [
        "# Measurements",
        "",
        "Generated by `python -m tools.report render` from `docs/measurements/*.json`, the kept outputs of the",
        "commands below: do not edit. The current figure of each measured thing, once, with the command that",
        "measured it, where and when. The other docs link here for their figures.",
    ]
    for key, heading in QUESTIONS.items():
        mine = [r for r in records.values() if r["question"] == key]
        if not mine:
            continue
        lines += ["", f"## {heading}"]
        for r in mine:
            m = r["machine"]
            where = f"{m['cpu'] or 'unknown CPU'}, {m['cpus']} CPUs, {r['date']}."
            note = f" {r['note']}" if r.get("note") else ""
            lines += ["", f"### {r['title']}", "", f"`{r['command']}`", where + note, ""]
            lines += KINDS[r["kind"]](r["data"])
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tools.report", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="what", required=True)
    rec = sub.add_parser("record")
    rec.add_argument("name")
    rec.add_argument("--kind", choices=sorted(KINDS), required=True)
    rec.add_argument("--question", choices=sorted(QUESTIONS), required=True, help="what the record answers")
    rec.add_argument("--title", default="")
    rec.add_argument(
        "--note", default="", help="what the command line does not say (what BASE and HEAD were)"
    )
    rec.add_argument("--from", dest="output", type=Path, help="the JSON the command wrote when it ran")
    sub.add_parser("render")
    argv = sys.argv[1:] if argv is None else argv
    cut = argv.index("--") if "--" in argv else len(argv)
    args, command = p.parse_args(argv[:cut]), argv[cut + 1 :]
    if args.what == "record":
        if not command:
            p.error("record needs a command after --")
        if args.output is not None and args.kind == "timed":
            p.error("--from keeps a tool's JSON; a timed record runs its command")
        print(
            record(
                args.name,
                args.kind,
                args.title,
                command,
                args.note,
                question=args.question,
                output=args.output,
            )
        )
        return 0
    OUT.write_text(render())
    print(OUT)
    return 0


if __name__ == "__main__":
    sys.exit(main())
