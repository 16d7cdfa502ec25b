"""Shared setup of the asv suites: the profile's grid, placement, snapshots and the results sidecar.

Profiles (``FUSEGATE_BENCH_PROFILE``): ``quick`` (the default) is two scales at 1 thread and at the placement's
full thread count, so ``asv continuous main HEAD`` finishes in minutes on a 2-core machine; ``full`` is 2^11 ...
2^18 envs over every power-of-two thread count the placement allows. The 1-thread cells are the quiet ones on a
shared machine: a 2-thread kernel on 2 cores stalls whenever a neighbour takes a core (an asv A/A moved 2-thread
cells by up to 1.5x, and a 15-20% slowdown of the hand-written kernel went unseen at 2 threads).
``FUSEGATE_BENCH_THREADS`` overrides the thread list (e.g. ``1,8,16,32``); ``FUSEGATE_BENCH_TASKS``,
``FUSEGATE_BENCH_IMPLS`` and ``FUSEGATE_BENCH_ENVS`` narrow the other axes (the scenario harness uses them). The tasks, implementations,
scales, baseline and paired implementations are the declared subject's (``gate.meter.subject``: this tree's
``[tool.fusegate]`` and its registry). The placement comes from the ``FUSEGATE_*`` variables (``gate.meter.placement``) and is applied in every benchmark process before any array is
allocated; what was asked and what the OS granted is written, with the machine and software fingerprints, to a
sidecar next to asv's results, so every stored result can be traced back to where it ran.

What one timing process does, and what it leaves to others:

- parity against each task's reference runs once per commit, in the timed suites' shared ``setup_cache``
  (``check_parity``); a process loads its kernels and calls each once (Numba's cache load), nothing more;
- the reference is timed (and costed) at ``REFERENCE_ENVS`` only;
- ``PAIRED_IMPLS``: the implementations the declared grid pairs with the baseline in the profile;
- the snapshot's arrays start at random cache-line offsets in every process (``FUSEGATE_BENCH_LAYOUT``,
  ``random`` by default, or ``fixed``), so a cell's processes average over memory layouts;
- each process records where its time went (``process`` records; ``python -m tools profile-time``).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

import benchmarks
import kernels
from gate import provenance, provenance_kernels, sidecar
from gate.meter import compat, fingerprint, parity, subject
from gate.meter.placement import AppliedPlacement, Placement, first_touch, prepare_fork
from gate.meter.profile import Profile, ProfileError
from gate.meter.subject import make_inputs

SUITES = Path(__file__).resolve().parents[1]  # the checkout of these suites and the meter
# The tree measured: the suites' own (benchmark_dir is ./benchmarks), or a team's repository that the fusegate
# at SUITES measures (``FUSEGATE_BENCH_TREE``, set by fusegate's asv calls for a tree without asv.conf.json).
ROOT = Path(Profile.from_env().tree or SUITES).resolve()
OUTSIDE = (
    ROOT != SUITES
)  # a team's tree: its tasks are the subject; kernels' shared code is the meter's, at SUITES
# every meter module here measures that tree (``gate.meter.subject.root``), the suites' own when none is given
os.environ[subject.VARIABLE] = str(ROOT)


def _measuring_this_tree() -> None:
    """The subject and the meter a benchmark process imports are the tree's it runs in, or the commit asv installed
    into its own environment; never another checkout's (an editable install of a different clone), whose code
    would be stored under this tree's commit."""
    import gate

    for module in (kernels, gate):
        checkout = Path(module.__file__).resolve().parents[1]
        if (checkout / "asv.conf.json").exists() and checkout != SUITES:
            raise ImportError(
                f"the benchmarks of {SUITES} imported {module.__name__} from another checkout, {checkout}: run "
                f"asv with ASV_PYTHONPATH={SUITES} (fusegate measure and gate --measure do)"
            )


_measuring_this_tree()
IMPORTED_S = benchmarks.process_age()  # the process's age once numpy, Numba and the kernels are imported


def _forked() -> None:  # asv's forkserver: the server did the imports (benchmarks/__init__.py)
    global IMPORTED_S
    IMPORTED_S = 0.0


os.register_at_fork(after_in_child=_forked)

SETTINGS = Profile.from_env()  # every FUSEGATE_BENCH_* setting, read once (gate.meter.profile)
PROFILE = SETTINGS.name


def _threads() -> list[int]:
    if SETTINGS.threads:
        return list(SETTINGS.threads)
    cpus = len(os.sched_getaffinity(0))
    if PROFILE == "quick":
        return sorted({1, cpus})
    return [t for t in (1, 2, 4, 8, 16, 32, 64, 128) if t <= cpus]


def axis(field: str, default: list, allowed=None) -> list:
    """A profile's grid axis, or the profile's narrowed one (e.g. for a scenario run), checked against ``allowed``."""
    values = getattr(SETTINGS, field)
    if values is None:
        return default
    unknown = [v for v in values if allowed is not None and v not in allowed]
    if unknown:
        raise ProfileError(
            f"FUSEGATE_BENCH_{field.upper()}: unknown {', '.join(map(str, unknown))}; known: {', '.join(allowed)}"
        )
    return list(values)


# What keeps this meter from measuring the subject (the registry API it calls, tasks it has no snapshot for): in
# every sidecar record, for the gate's error row. An unusable registry leaves the grid empty.
PROBLEMS = compat.problems()
_USABLE = not compat.api_problems()
REGISTRY = subject.registry() if _USABLE else None
DECLARED = subject.declaration() if _USABLE else None
BASELINE = DECLARED.baseline if DECLARED else ""  # the implementation the others are paired with
_TASKS = compat.measurable()
TASKS = axis("tasks", _TASKS, _TASKS)
_IMPLS = list(REGISTRY.impls) if REGISTRY else []
IMPLS = axis("impls", _IMPLS, _IMPLS)
_GRID = DECLARED.profile(PROFILE) if DECLARED else None
NUM_ENVS = axis("envs", list(_GRID.scales) if _GRID else [])
THREADS = _threads()
# The NumPy reference is single-threaded and its time grows linearly with the envs: one scale says what it
# costs (timed and under callgrind), the parity check still runs it at every scale.
REFERENCE_ENVS = NUM_ENVS[0] if NUM_ENVS else 0


def available(task: str) -> tuple[str, ...]:
    """``task``'s implementations (the registry's)."""
    return REGISTRY.available(task)


def reference(task: str) -> str:
    """``task``'s reference implementation (the registry's)."""
    return REGISTRY.reference(task)


def collects(task: str) -> bool:
    """Whether ``task`` has a collector env (its spec's ``env``): a task without one has no collector cells."""
    return REGISTRY.spec(task).env is not None


def is_reference(impl: str) -> bool:
    """Whether ``impl`` is the reference of a task of the grid (a reference is timed at one scale only)."""
    return any(reference(t) == impl for t in TASKS)


def policy_value(key: str, default):
    """A key of this tree's ``fusegate-policy.toml`` (what the quick profile needs to measure), or ``default``.
    The gate reads the policy from the base commit; this is the measured commit's, which a change to the
    policy file makes differ only for that change."""
    import tomllib

    try:
        return tomllib.loads((ROOT / "fusegate-policy.toml").read_text()).get(key, default)
    except (OSError, ValueError):
        return default


# Implementations timed against the base in lockstep (the AgainstBase suites): the policy's head_vs_base.
HEAD_VS_BASE = [i for i in IMPLS if i in policy_value("head_vs_base", IMPLS)]

# Implementations paired with the baseline (hot slice and collector): the declared grid's for the profile.
_PAIRED = [i for i in (_GRID.paired if _GRID else ()) if i in IMPLS and i != BASELINE]
PAIRED_IMPLS = axis("paired_impls", _PAIRED, IMPLS)
# Each timing process lays its snapshot's arrays out at random cache-line offsets (gate.meter.placement.first_touch)
# so the processes of a cell average over layouts; ``fixed`` gives every process the allocator's layout.
LAYOUT = SETTINGS.layout
PAIRS = 40 if PROFILE == "quick" else 60
# The track_ suites (bandwidth and CPU metrics, JIT times, paired ratios) are single values per process: asv
# compares them by its factor alone, with no statistics, and on a shared machine they moved by 10-70% between
# two runs of the same commit (an A/A `asv continuous` flagged 9 of them). They are recorded for the gate, which
# judges them with confidence intervals; `asv continuous` in the quick profile judges steady-state time only.
TRACKS = SETTINGS.with_tracks
# The base a head is timed against in lockstep (``gate.meter.duet``; the AgainstBase suites): its tree and commit,
# set by ``fusegate gate --measure`` for the head's measurement. Unset, those suites are skipped.
AGAINST, AGAINST_COMMIT = SETTINGS.against, SETTINGS.against_commit
# Its worker's interpreter: the base's, while this process may run in an environment of the head's pins.
AGAINST_PYTHON = SETTINGS.against_python or sys.executable
# HotSlice processes per cell (a plan lowers it on large machines, where raw times only inform: gate.meter.plan). A
# head timed against its base in lockstep takes at most HEAD_HOT_ROUNDS: its raw times only inform there too
# (history, each implementation's fastest thread count), and the lockstep pass is what decides.
HEAD_HOT_ROUNDS = 2
# Who judges these results. fusegate (``FUSEGATE_BENCH_GATE=1``, set by its asv calls) pools the samples of a
# process as one group and reads the paired tracks from the sidecar with confidence intervals. asv alone
# (``asv continuous``) takes every sample as independent (Mann-Whitney U) and a track's single value by its
# factor: for it a timing process gives one sample (the mean of its calls over ``ASV_SAMPLE_S``), a cell has
# ``ASV_HOT_ROUNDS`` processes, and the single-value paired tracks are left out (the full profile keeps its
# tracks). An A/A ``asv continuous`` with five samples per process flagged a 2-thread cell at 0.76.
GATE = SETTINGS.gate
ASV_HOT_ROUNDS = 8
ASV_SAMPLE_S = 0.1
_HOT = SETTINGS.hot_rounds if GATE or os.environ.get("FUSEGATE_BENCH_HOT_ROUNDS") else ASV_HOT_ROUNDS
HOT_ROUNDS = min(_HOT, HEAD_HOT_ROUNDS) if AGAINST else _HOT
HOT_REPEAT = 5 if GATE else 1
# The in-process paired ratios (Paired, CollectorPaired): for the gate, and in the full profile's tracks.
PAIRED_TRACKS = GATE or TRACKS
# Worker pairs per lockstep pass (each one group of the cell's hierarchical bootstrap), pairs per cell and pair.
DUET_ROUNDS = SETTINGS.duet_rounds
DUET_PAIRS = 30
# Further worker pairs, over only the cells whose time is in question (``gate.meter.duet.in_question``).
DUET_MORE = SETTINGS.duet_more
# Cells of a lockstep pass, when only some need more samples: "task/impl/num_envs/threads,...".
DUET_CELLS = SETTINGS.duet_cells

# The asv machine name this run records its results under, when fusegate measures one of several placements.
ASV_MACHINE = os.environ.get("FUSEGATE_ASV_MACHINE", "")
_applied: AppliedPlacement | None = None
_phases: dict[str, float] = {}


@contextlib.contextmanager
def phase(name: str):
    """Time a part of this process's setup (snapshot, parity, load) for its ``process`` record."""
    t0 = time.perf_counter()
    try:
        yield
    finally:
        _phases[name] = _phases.get(name, 0.0) + time.perf_counter() - t0


_process: dict = {}


def record_process(benchmark: str, task: str, impl: str, num_envs: int, threads: int) -> None:
    """Name this benchmark process's cell for ``flush_process`` (call it from ``setup``)."""
    _process.update(benchmark=benchmark, task=task, impl=impl, num_envs=num_envs, threads=threads)


def flush_process() -> None:
    """Where this benchmark process's time went so far (call it from ``teardown``, which asv may run once per
    sample): start-up of the interpreter and asv, imports, each timed setup phase, and its age; the rest of its
    life is measuring. One small file per process under ``.asv/fusegate/<commit>/processes/``, rewritten by
    every call, so its last state stands (asv's forkserver ends a benchmark process with ``os._exit``: no
    exit hook runs). ``python -m tools profile-time`` sums them per suite; the gate does not read them."""
    age = benchmarks.process_age()
    if age is None or benchmarks.STARTED_S is None or IMPORTED_S is None or not _process:
        return  # no /proc, or no cell: nothing to break down
    record = {
        **_process,
        "pid": os.getpid(),
        "time": time.time(),
        "startup_s": benchmarks.STARTED_S,
        "import_s": IMPORTED_S - benchmarks.STARTED_S,
        "phases": dict(_phases),
        "age_s": age,
    }
    directory = ROOT / ".asv" / "fusegate" / measured_commit()[:8] / "processes"
    directory.mkdir(parents=True, exist_ok=True)
    (directory / f"{os.getpid()}-{int(time.time() - age)}.json").write_text(json.dumps(record))


def place() -> AppliedPlacement:
    """Apply the environment's placement once per process (before any array exists) and return it."""
    global _applied
    if _applied is None:
        _applied = Placement.from_env().apply()
        write_sidecar(sidecar.PLACEMENT, {})  # every benchmark process records where it ran
    return _applied


def require(task: str, impl: str, threads: int) -> AppliedPlacement:
    """Skip (asv's NotImplementedError) what does not exist or what this placement cannot run."""
    if impl not in available(task):
        raise NotImplementedError(f"{impl} has no {task} kernel")
    applied = place()
    if threads > len(applied.cpus):
        raise NotImplementedError(f"threads={threads} > {len(applied.cpus)} CPUs of the placement")
    return applied


def synthetic(task: str, num_envs: int) -> dict:
    """``make_inputs(task, num_envs, seed=0)``, generated once per subject and meter (their ``gate.provenance``
    ids) and loaded from ``.asv/fusegate/snapshots/`` by every later process: generating 32768 envs takes ~1 s
    here, loading them ~0.05 s."""
    ids = measured_with()
    path = (
        ROOT
        / ".asv"
        / "fusegate"
        / "snapshots"
        / f"{ids['subject']}-{ids['meter']}"
        / f"{task}-{num_envs}.npz"
    )
    try:
        with np.load(path) as saved:
            return {name: saved[name] for name in saved.files}
    except (OSError, ValueError):
        pass  # not made yet, or torn by a killed writer: make it
    snap = make_inputs(task, num_envs, seed=0)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f"{path.stem}.{os.getpid()}.npz")
    np.savez(partial, **snap)
    os.replace(partial, path)  # whole or absent to every other process
    return snap


def snapshot(task: str, num_envs: int, threads: int) -> dict:
    """A synthetic snapshot whose pages were first touched by ``threads`` threads laid out like the kernel's."""
    import numba

    previous = numba.get_num_threads()
    numba.set_num_threads(min(threads, previous))
    try:
        with phase("snapshot"):
            rng = np.random.default_rng() if LAYOUT == "random" else None
            return first_touch(synthetic(task, num_envs), rng=rng)
    finally:
        numba.set_num_threads(previous)


def reusable(name: str, inputs: dict, compute, *, replay=None, keep=lambda result: True):
    """``compute()``'s JSON result, computed once per ``inputs`` on this machine and reused by every later
    commit, clone and asv environment with the same inputs (``Stored``). ``replay(result)`` runs on a reused
    result (e.g. to write this commit's sidecar records); a result ``keep`` refuses is not stored. Returns
    (result, reused)."""
    stored = Stored(name, inputs)
    result = stored.load()
    if result is not None:
        if replay is not None:
            replay(result)
        return result, True
    result = compute()
    if keep(result):
        stored.save(result)
    return result, False


class Stored:
    """One exact result on this machine's disk (``~/.cache/fusegate/results/``, or under ``FUSEGATE_CACHE_DIR``;
    ``FUSEGATE_REUSE=0`` turns reuse off), keyed by ``inputs`` and what it is exact for: the subject (its
    ``gate.provenance`` id, or ``subject``, e.g. one implementation's ``implementation_id``) and the meter in
    this tree, and the software fingerprint."""

    def __init__(self, name: str, inputs: dict, *, subject: str | None = None):
        ids = measured_with()
        digest = hashlib.sha256(
            json.dumps(
                {
                    **inputs,
                    "name": name,
                    "subject": subject or ids["subject"],
                    "meter": ids["meter"],
                    "software": fingerprint.software(),
                },
                sort_keys=True,
                default=str,
            ).encode()
        ).hexdigest()[:24]
        base = (
            os.environ.get("FUSEGATE_CACHE_DIR")
            or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "fusegate"
        )
        self.path = Path(base) / "results" / f"{name}-{digest}.json"
        # the key names this tree's sources: a process that imported other kernels (the commit asv installed
        # into its own environment) neither reuses nor stores
        own = Path(kernels.__file__).resolve().parents[1] == (SUITES if OUTSIDE else ROOT)
        self.usable = own and os.environ.get("FUSEGATE_REUSE", "1") != "0"

    def load(self):
        if not self.usable:
            return None
        try:
            return json.loads(self.path.read_text())
        except (OSError, ValueError):
            return None

    def save(self, result) -> None:
        if not self.usable:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        partial = self.path.with_name(f"{self.path.stem}.{os.getpid()}.tmp")
        partial.write_text(json.dumps(result))
        os.replace(partial, self.path)


def implementation_id(task: str, impl: str) -> str:
    """The subject id of ``impl``'s ``task`` kernel in this tree (``gate.provenance_kernels.kernel_ids``): an edit to
    another implementation's own module does not change it. Without task packages that name it: the whole subject's
    id."""
    return kernel_ids(ROOT).get(f"{task}/{impl}") or measured_with()["subject"]


@functools.cache
def kernel_ids(root: Path) -> dict[str, str]:
    """``gate.provenance_kernels.kernel_ids`` of a tree, read once per process (the trees a pass measures do not change
    under it)."""
    return provenance_kernels.kernel_ids(root)


def same_sources(base_root: str | Path) -> set[str]:
    """The kernels (``task/impl``) whose sources in this tree are those of the tree at ``base_root``: the lockstep
    pass does not time them when the policy's ``same_sources_pass`` lets their rows pass on that (the gate checks
    the same ids in both commits' runs)."""
    if not policy_value("same_sources_pass", True):
        return set()
    mine, theirs = kernel_ids(ROOT), kernel_ids(Path(base_root))
    return {kernel for kernel, id_ in mine.items() if theirs.get(kernel) == id_}


def write_failure(
    task: str, impl: str, num_envs: int, threads: int, text: str, *, suite: str = "hot_slice", tail: str = ""
) -> None:
    """The sidecar's failure record of a cell (``gate.sidecar.failure``): the gate's correctness row quotes it."""
    write_sidecar(
        sidecar.FAILURE,
        sidecar.failure(
            task=task, impl=impl, num_envs=num_envs, threads=threads, suite=suite, text=text, tail=tail
        ),
    )


def check_parity() -> dict:
    """The timed hot-slice suites' ``setup_cache``: every fused implementation of the profile against its task's
    reference, once per commit, on the snapshot the timing processes use (seed 0) at each thread count.

    Returns {(task, impl, num_envs, threads): "" or why it fails}; a failure also goes to the sidecar (asv keeps
    no exception text), so the gate's correctness row can name it. One process does what every timing process
    used to repeat (the reference at 32768 envs is most of it).
    """
    cpus = len(place().cpus)
    grid = {"tasks": TASKS, "impls": IMPLS, "envs": NUM_ENVS, "threads": [t for t in THREADS if t <= cpus]}

    def replay(found: dict) -> None:  # a reused check: this commit's sidecar still names what failed
        for key, message in found.items():
            if message:
                write_failure(*key.split("|")[:2], *map(int, key.split("|")[2:]), message)

    found, _ = reusable(
        "parity", grid, lambda: {"|".join(map(str, k)): v for k, v in _parity(cpus).items()}, replay=replay
    )
    return {tuple(int(p) if p.isdigit() else p for p in k.split("|")): v for k, v in found.items()}


def _parity(cpus: int) -> dict:
    found = {}
    for task in TASKS:
        impls = [i for i in available(task) if i in IMPLS and i != reference(task)]
        cases = [(impl, t) for impl in impls for t in THREADS if t <= cpus]
        for n in NUM_ENVS:
            with phase("parity"):
                reports = parity.compare_many(synthetic(task, n), task=task, cases=cases, catch=True)
            for (impl, t), report in zip(cases, reports, strict=True):
                if isinstance(report, Exception):
                    message = f"{type(report).__name__}: {report}"
                elif not report.ok:
                    bad = ", ".join(f"{a.name} (max abs {a.max_abs:.3g})" for a in report.arrays if not a.ok)
                    message = f"RuntimeError: {task}/{impl} fails parity with the reference: {bad}"
                else:
                    message = ""
                if message:
                    write_failure(task, impl, n, t, message)
                found[(task, impl, n, t)] = sidecar.message(message)
    return found


def checked_kernel(task: str, impl: str, num_envs: int, threads: int, snap: dict, checked: dict):
    """The kernel, warm (its first call loads it from Numba's cache), if ``checked`` (``check_parity``) found it
    agrees with the reference here.

    A failing implementation raises, so asv reports the benchmark as failed instead of timing it; an exception
    of its own (loading, the first call) goes to the sidecar first, like the parity check's.
    """
    message = checked.get((task, impl, num_envs, threads), "")
    if message:
        raise RuntimeError(message)
    try:
        with phase("load"):
            kernel = REGISTRY.load(task, impl, num_envs=num_envs, threads=threads)
            kernel.update_state(snap)
    except Exception as exc:
        write_failure(task, impl, num_envs, threads, f"{type(exc).__name__}: {exc}")
        raise
    return kernel


@functools.cache
def _machine() -> dict:
    """This process's machine fingerprint, read once (1.3 ms of /proc and /sys per read, per sidecar record)."""
    return fingerprint.machine()


@functools.cache
def measured_with() -> dict:
    """What this process measures and with what: the ids of the subject and the meter in this tree
    (``gate.provenance``), the commit whose meter it is (a measurement tree's manifest; None: the tree's own),
    what keeps the meter from measuring the subject (``PROBLEMS``), and the base it is timed against in
    lockstep (``AGAINST_COMMIT``; None: none), and each kernel's id (``kernel_ids``). Read once per process
    (the tree does not change under a run: about 0.1 s of hashing and parsing); a copy."""
    return json.loads(_measured_with())


@functools.cache
def _measured_with() -> str:
    try:
        manifest = json.loads((ROOT / provenance.MANIFEST).read_text())
    except (OSError, ValueError):
        manifest = {}
    return json.dumps(
        {
            **provenance.ids_on_disk(ROOT),
            "kernels": kernel_ids(ROOT),
            "meter_commit": manifest.get("meter_commit"),
            "problems": PROBLEMS,
            "against": AGAINST_COMMIT if AGAINST else None,
        }
    )


def sidecar_line(kind: str, record: dict, *, commit: str, env: str, applied: AppliedPlacement) -> dict:
    """One sidecar record (``gate.sidecar.FORMAT``): placement, fingerprints, provenance and the measurement."""
    return {
        "format": sidecar.FORMAT,
        "kind": kind,
        "commit": commit,
        "env": env,
        "profile": PROFILE,
        "time": time.time(),
        "pid": os.getpid(),
        "placement": applied.to_dict(),
        "machine": _machine(),
        "software": fingerprint.software(applied.layer),
        "provenance": measured_with(),
        # the asv machine name of a machine's placement (set by fusegate's measure): ingest gives the record to
        # that machine's results only (gate.ingest.asv_dir)
        **({"asv_machine": ASV_MACHINE} if ASV_MACHINE else {}),
        **record,
    }


def measured_commit() -> str:
    """The commit this benchmark process measures.

    asv 0.6 does not pass ``ASV_COMMIT`` to benchmark processes; it records the commit it installed in the
    environment's ``asv-install-status.json`` (the environment is ``sys.prefix``). With ``-E existing`` there is
    no such file and the driver sets ``ASV_COMMIT`` itself (``fusegate run`` does).
    """
    if os.environ.get("ASV_COMMIT"):
        return os.environ["ASV_COMMIT"]
    try:
        return json.loads((Path(sys.prefix) / "asv-install-status.json").read_text())["commit_hash"]
    except (OSError, ValueError, KeyError, TypeError):
        return "working-tree"


def write_sidecar(kind: str, record: dict) -> Path:
    """Append one JSON line for the commit asv is measuring to ``.asv/fusegate/<commit>/<kind>.jsonl``."""
    commit = measured_commit()
    env = os.environ.get("ASV_ENV_NAME") or Path(sys.prefix).name
    line = sidecar_line(kind, record, commit=commit, env=env, applied=place())
    directory = ROOT / ".asv" / "fusegate" / commit[:8]
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{kind}.jsonl"
    with open(path, "a") as f:  # asv runs one benchmark process at a time
        f.write(json.dumps(line) + "\n")
    return path


def duet_pass(kind: str, cells: list, *, pairs: int = DUET_PAIRS) -> dict:
    """Every cell of ``cells`` (``gate.meter.duet.Cell``) whose kernel's sources are not the base's
    (``same_sources``) timed against the base in lockstep: ``DUET_ROUNDS``
    worker pairs, each over every cell in random order, then up to ``DUET_MORE`` more over only the cells whose
    time is in question (their median head/base above 1 + the policy's ``head_vs_base_margin``), so a slower cell
    has the groups to be decided by time in this pass; one sidecar record per cell and worker pair (``kind``:
    ``against_base`` or ``collector_against_base``, pairs as ``impl_s`` = the head's, ``base_s`` = the base's).
    Returns {(task, impl, num_envs, threads): the median head/base ratio, or an error message}."""
    import random
    import statistics

    from gate.meter import duet

    if DUET_CELLS:
        wanted = set(DUET_CELLS.split(","))
        cells = [c for c in cells if f"{c.task}/{c.impl}/{c.num_envs}/{c.threads}" in wanted]
    same = same_sources(AGAINST)
    cells = [c for c in cells if f"{c.task}/{c.impl}" not in same]
    place()
    groups: dict[tuple, list[list[float]]] = {}  # per cell, each worker pair's head/base ratios
    errors: dict[tuple, str] = {}
    rng = random.Random()

    def worker_pair(these: list) -> None:
        order = list(these)
        rng.shuffle(order)
        with duet.Duet(ROOT, Path(AGAINST), pythons={"head": sys.executable, "base": AGAINST_PYTHON}) as pair:
            for c in order:
                key = (c.task, c.impl, c.num_envs, c.threads)
                if key in errors:
                    continue
                try:
                    got = pair.pairs(c, pairs)
                except duet.DuetError as exc:
                    errors[key] = str(exc)
                    write_failure(
                        c.task, c.impl, c.num_envs, c.threads, f"timed against the base: {exc}", suite=kind
                    )
                    if any(side.proc.poll() is not None for side in pair.sides.values()):
                        break  # a worker that died is gone: the pass's next pair of workers goes on
                    continue
                groups.setdefault(key, []).append([p.head_s / p.base_s for p in got])
                write_sidecar(
                    kind,
                    {
                        "task": c.task,
                        "impl": c.impl,
                        "num_envs": c.num_envs,
                        "threads": c.threads,
                        "baseline": "base",
                        "base_commit": AGAINST_COMMIT,
                        "pairs": [{"impl_s": p.head_s, "base_s": p.base_s, "first": p.first} for p in got],
                    },
                )

    for _ in range(DUET_ROUNDS):
        worker_pair(cells)
    margin = float(policy_value("head_vs_base_margin", 0.05))
    for _ in range(DUET_MORE):
        slower = [
            c for c in cells if duet.in_question(groups.get((c.task, c.impl, c.num_envs, c.threads)), margin)
        ]
        if not slower:
            break
        worker_pair(slower)
    pooled = {key: statistics.median(r for group in found for r in group) for key, found in groups.items()}
    return {**pooled, **errors}


if sys.argv[1:2] == ["run_server"]:
    # asv's forkserver (``asv/benchmark.py run_server``) imports the suites once and forks every benchmark
    # process from it: what is read and initialised here is paid once per asv call, not once per process
    _measured_with()
    prepare_fork()
