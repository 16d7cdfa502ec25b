"""``asv run`` under ``fusegate run``: asv's full output to a log file, a progress line with the time left.

asv's percentage counts steps (one benchmark in one round), and steps differ by minutes: the cost pass is one
``setup_cache``. The estimate weighs each asv call by how long its benchmarks took in this machine's previous
asv results (asv records every benchmark's and every ``setup_cache``'s duration) or, without history, by
``DEFAULT_SECONDS`` (the quick profile on the development machine); within a call, a call of
one round counts the steps it finished by their weights, a call of several rounds goes by asv's percentage (its
rounds are alike). Measured over expected so far scales what is left, so a slower machine's estimate grows
after its first steps.

A tree without an ``asv.conf.json`` of its own (a team's repository: its task package, its pyproject and its
``[tool.fusegate]`` table) is measured by the fusegate that runs: ``outside_config`` writes the asv
configuration into the tree's ``.fusegate/``, this fusegate's own with its suites as the benchmark directory
and the tree as the project, and the benchmark processes import the tree first, then this fusegate
(``gate.provenance.import_path``). That fusegate must be the one the commit whose meter measures (the base)
pins exactly (``check_meter``): the base's pin is the meter of both sides.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from gate import git, provenance
from gate.domain.timings import SUITE_SECONDS

OUTSIDE_CONFIG = Path(".fusegate") / "asv.conf.json"  # in a tree without an asv.conf.json of its own
DEFAULT_SECONDS = SUITE_SECONDS  # used when this machine has no asv results yet
_LINE = re.compile(r"^\[\s*(?P<percent>[\d.]+)%\]\s*·+\s*(?P<message>.*?)\s*$")
_DONE = re.compile(r"^(?P<name>Setting up \S+|[\w.]+)\s+(?P<status>ok|failed)$")
# asv's last words when its --bench patterns select nothing of the suites (exit code 1): a subject without the
# benchmarks of a call (no collector env, nothing paired with the baseline) has nothing to run there
_NOTHING = "No benchmarks selected"


def _key(name: str) -> str:
    """The history's key of an asv step: the benchmark's name, or ``<setup_cache KEY>``."""
    return f"<setup_cache {name.removeprefix('Setting up ')}>" if name.startswith("Setting up ") else name


def history(results: Path, machine: str | None) -> dict[str, float]:
    """Each step's duration in this machine's newest asv results: benchmark names, and each benchmark's
    ``setup_cache`` (from asv's benchmarks.json) under ``<setup_cache KEY>``."""
    folder = results / machine if machine else None
    files = (
        [p for p in folder.glob("*.json") if p.name != "machine.json"] if folder and folder.is_dir() else []
    )
    if not files:
        return {}
    try:
        data = json.loads(max(files, key=lambda p: p.stat().st_mtime).read_text())
    except (OSError, ValueError):
        return {}
    seconds: dict[str, float] = {}
    columns = data.get("result_columns", [])
    for name, values in data.get("results", {}).items():
        duration = dict(zip(columns, values, strict=False)).get("duration")
        if isinstance(duration, (int, float)) and duration > 0:
            seconds[name] = float(duration)
    for key, duration in data.get("durations", {}).items():
        if key != "<build>" and isinstance(duration, (int, float)) and duration > 0:
            seconds[key] = float(duration)
    return seconds


def _cache_keys(results: Path) -> dict[str, str]:
    """benchmark name -> its ``<setup_cache KEY>``, from asv's benchmarks.json (empty before the first run)."""
    try:
        known = json.loads((results / "benchmarks.json").read_text())
    except (OSError, ValueError):
        return {}
    return {
        name: f"<setup_cache {info['setup_cache_key']}>"
        for name, info in known.items()
        if isinstance(info, dict) and info.get("setup_cache_key")
    }


def plan(pattern: str, rounds: int, results: Path, machine: str | None) -> Call:
    """The steps of ``asv run --bench pattern -a rounds=rounds``: from this machine's newest asv results where
    they have the benchmarks (with their ``setup_cache``), else ``DEFAULT_SECONDS`` per class (taken at 3
    rounds for the timed classes)."""
    seen = history(results, machine)
    names = [k for k in seen if not k.startswith("<") and re.search(pattern, k)]
    if names:
        caches = _cache_keys(results)
        steps = {k: seen[k] for k in names}
        steps |= {caches[n]: seen[caches[n]] for n in names if caches.get(n) in seen}
        return Call(steps, rounds)
    scale = rounds / 3 if rounds > 1 else 1
    return Call({k: s * scale for k, s in DEFAULT_SECONDS.items() if re.search(pattern, f"{k}.")}, rounds)


@dataclass
class Call:
    """One asv call of a run: its steps' expected seconds (one round's worth times ``rounds``)."""

    steps: dict[str, float]
    rounds: int = 1

    @property
    def expected(self) -> float:
        return sum(self.steps.values())


@dataclass
class Estimate:
    """Progress over a run's asv calls: which call, how far into it, and the seconds left."""

    calls: list[Call]
    started: float = field(default_factory=time.monotonic)
    current: int = 0
    fraction: float = 0.0  # of the current call
    done: set = field(default_factory=set)

    def finish(self, key: str) -> None:
        """A step asv finished: a benchmark's name or ``<setup_cache KEY>`` (a class's default covers both)."""
        self.done.add(key)
        self.done.add(".".join(key.split(".")[:2]))
        call = self.calls[self.current]
        if call.rounds == 1 and call.expected > 0:
            self.fraction = sum(v for k, v in call.steps.items() if k in self.done) / call.expected

    def percent(self, value: float) -> None:
        if self.calls[self.current].rounds > 1:
            self.fraction = value / 100

    def next_call(self) -> None:
        self.current, self.fraction = min(self.current + 1, len(self.calls) - 1), 0.0

    def left(self) -> float:
        elapsed = time.monotonic() - self.started
        before = sum(c.expected for c in self.calls[: self.current])
        so_far = before + self.fraction * self.calls[self.current].expected
        total = sum(c.expected for c in self.calls)
        pace = elapsed / so_far if so_far > 30 else 1.0  # a few steps in: this machine's speed
        return max((total - so_far) * pace, 0.0)


def run(
    command: Sequence[str],
    *,
    env: dict,
    cwd: Path | None = None,
    log: Path,
    estimate: Estimate,
    say: Callable[[str], None],
    status: Callable[[str], None],
) -> int:
    """Run one asv command, its output appended to ``log``; ``say`` gets a line per finished step, ``status``
    the progress line (every second). Returns asv's exit code (0 when its patterns selected no benchmark)."""
    log.parent.mkdir(parents=True, exist_ok=True)
    last = time.monotonic()
    current = ["starting asv"]
    nothing = [False]
    stop = threading.Event()

    def tick() -> None:
        while not stop.wait(1.0):
            elapsed = time.monotonic() - estimate.started
            left = estimate.left()
            status(f"{current[0]}: {elapsed / 60:.1f} min elapsed, about {left / 60:.1f} min left")

    ticker = threading.Thread(target=tick, daemon=True)
    with open(log, "a") as out:
        proc = subprocess.Popen(
            list(command), env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
        )

        def seen(text: str, *, whole: bool) -> None:
            """A line of asv's output; asv writes a step's name before it runs and its status after, on one
            line, so the unfinished last line says what is running now."""
            nonlocal last
            if whole and text.strip().lstrip("·").strip() == _NOTHING:
                nothing[0] = True
            m = _LINE.match(text)
            if not m:
                return
            message = m["message"]
            estimate.percent(float(m["percent"]))
            if message.startswith("Running ("):
                current[0] = f"running {message[len('Running (') :].split('--')[0]}"
                return
            d = _DONE.match(message) if whole else None
            if d:
                now = time.monotonic()
                estimate.finish(_key(d["name"]))
                say(f"{d['status']:>6}  {d['name']}  {now - last:.0f} s")
                last = now
                current[0] = "measuring"
            elif not whole and "=" not in message:
                current[0] = f"running {message.split()[0]}" if message else current[0]

        ticker.start()
        try:
            pending = ""
            while chunk := os.read(proc.stdout.fileno(), 65536):
                text = chunk.decode(errors="replace")
                out.write(text)
                out.flush()
                *lines, pending = (pending + text).split("\n")
                for line in lines:
                    seen(line.rstrip("\r"), whole=True)
                seen(pending, whole=False)
            seen(pending, whole=True)
            code = proc.wait()
            return 0 if code == 1 and nothing[0] else code
        finally:
            stop.set()
            if proc.poll() is None:
                proc.kill()
                proc.wait()


def outside_config(tree: Path, results: Path) -> Path | None:
    """The asv configuration of a tree that has none of its own, written to ``tree/.fusegate/asv.conf.json``:
    the running fusegate's (its launch method, timeouts) with the benchmark directory its asv suites, the
    project and repository the tree, the results in ``results`` and asv's other directories under the tree's
    ``.asv/``. None for a tree with its own ``asv.conf.json`` (this repository and its measurement trees)."""
    tree = Path(tree).resolve()
    if (tree / "asv.conf.json").is_file():
        return None
    meter = provenance.meter_root()
    suites = meter / "benchmarks"
    if not (meter / "asv.conf.json").is_file() or not (suites / "__init__.py").is_file():
        raise ValueError(
            f"{tree} has no asv.conf.json, so the fusegate that runs measures it with its own asv suites, and "
            f"{meter} has none (asv.conf.json and benchmarks/): run fusegate from a checkout or source install "
            "of the version the base commit pins"
        )
    conf = json.loads((meter / "asv.conf.json").read_text())
    conf.update(
        project=_project_name(tree),
        repo=str(tree),
        benchmark_dir=str(suites),
        env_dir=str(tree / ".asv" / "env"),
        results_dir=str(Path(results).resolve()),
        html_dir=str(tree / ".asv" / "html"),
    )
    path = tree / OUTSIDE_CONFIG
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(conf, indent=4) + "\n"
    if not path.is_file() or path.read_text() != text:
        path.write_text(text)
    return path


def _project_name(tree: Path) -> str:
    import tomllib

    try:
        name = tomllib.loads((tree / provenance.PINS).read_text()).get("project", {}).get("name")
    except (OSError, ValueError):
        name = None
    return str(name or tree.name)


def check_meter(repo: Path, meter_sha: str) -> None:
    """Refuse (ValueError) to measure with ``meter_sha``'s meter when that commit pins fusegate (a team's
    repository) and the fusegate that runs is not exactly that pin."""
    pin = provenance.meter_pin(git.show(repo, meter_sha, provenance.PINS))
    if pin is None:
        return  # this repository: its meter is its own tree
    running = provenance.running_pin()
    if _exact_form(pin) != _exact_form(running):
        raise ValueError(
            f"commit {meter_sha[:12]} measures with {pin} (its pyproject.toml), and this is {running}: install "
            f"that one (pip install '{pin}') and run again. The base's fusegate pin measures base and head; "
            "pin it exactly (fusegate==VERSION)"
        )


def _exact_form(requirement: str) -> str:
    return "".join(requirement.split()).lower().replace("_", "-")
