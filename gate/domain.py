"""The gate's vocabulary, shared by every layer: the asv benchmarks it reads (their names and parameters), the
records a validated upload becomes, what makes two machines one kind, and the verdicts it answers.

Pure data and functions: no I/O, no store, no web framework, nothing from ``kernels`` (the gate never imports
the code it judges).
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum

from gate import sidecar

# The cost signal's metrics (callgrind): instructions, simulated cache misses and their cycle estimate.
COST_METRICS = ("instructions", "l1_misses", "ll_misses", "estimated_cycles")
# The asv benchmarks the gate reads, with their parameter names (from benchmarks.json, checked against these).
GRID = ("task", "impl", "num_envs", "threads")
# The cost signal (benchmarks/cost.py): one exact value per cell and metric, measured at 1 thread.
COST = {metric: f"cost.Cost.track_{metric}" for metric in COST_METRICS}
# The end-to-end collector (benchmarks/collector.py): its check against the reference's rollout, its paired step
# ratio to the baseline, and the cost of its step without physics (benchmarks/cost.py).
COLLECTOR_CHECK = "collector.CollectorCheck.track_reward_max_diff"
COLLECTOR_PAIRED = "collector.CollectorPaired.track_ratio"
COLLECTOR_COST = {metric: f"cost.CollectorCost.track_{metric}" for metric in COST_METRICS}
# Derived from the ``collector_paired`` sidecar records, one sample list per process: each side's step time
# (the baseline's from every process it was paired in), and its physics, kernel and the rest per env-step.
COLLECTOR_STEP = "collector.CollectorPaired.step"
# A head against its base in lockstep (two worker processes, samples alternated): head/base ratios, one sample list
# per worker pair. The head_vs_base rows' time, where they exist.
AGAINST_BASE = "hot_slice.AgainstBase.track_ratio"
COLLECTOR_AGAINST_BASE = "collector.CollectorAgainstBase.track_ratio"
COLLECTOR_PHASES = {phase: f"collector.CollectorPaired.{phase}_us" for phase in ("physics", "kernel", "rest")}
COST_BENCHMARKS = frozenset(COST.values()) | frozenset(COLLECTOR_COST.values())
COST_UNITS = {
    "instructions": "instructions",
    "l1_misses": "misses",
    "ll_misses": "misses",
    "estimated_cycles": "cycles",
}
# Benchmarks the gate reads only as passed or failed: their value is kept, their samples are not summarized
# (a reward difference of 0 has no logarithm).
STATUS_ONLY = frozenset({COLLECTOR_CHECK})
BENCHMARKS = {
    "hot_slice.HotSlice.time_update_state": GRID,
    "hot_slice.Paired.track_ratio": GRID,
    "hot_slice.HotSliceMetrics.track_time_vs_copy": GRID,
    "hot_slice.HotSliceMetrics.track_cpu_util": GRID,
    "hot_slice.JIT.track_compile_s": ("task", "impl"),
    "hot_slice.JIT.track_cache_load_s": ("task", "impl"),
    **{name: GRID for name in COST.values()},
    COLLECTOR_CHECK: GRID,
    COLLECTOR_PAIRED: GRID,
    **{name: GRID for name in COLLECTOR_COST.values()},
    AGAINST_BASE: GRID,
    COLLECTOR_AGAINST_BASE: GRID,
}
# ``asv run --bench`` for what the gate decides on in the quick profile (``fusegate run``, the scenarios): the
# exact suites are one measurement per commit (their classes say rounds = 1; asv's ``-a rounds=N`` would run
# every track of them in N more processes for nothing), the timed ones take the rounds asked for.
GATE_BENCH_EXACT = r"^(cost\.(Cost|CollectorCost)|collector\.CollectorCheck)\."
GATE_BENCH_TIMED = r"^(hot_slice\.(HotSlice|Paired)|collector\.CollectorPaired)\."
GATE_BENCH_HOT = r"^hot_slice\.HotSlice\."
GATE_BENCH_PAIRED = r"^(hot_slice\.Paired|collector\.CollectorPaired)\."
# A head timed against its base in lockstep: one pass (its own worker pairs), only when a base tree is named.
GATE_BENCH_AGAINST = r"^(hot_slice\.AgainstBase|collector\.CollectorAgainstBase)\."
# The same without the collector's suites: a machine's second placement (the collector is measured once per commit,
# on the first; gate.meter.plan).
_WITHOUT_COLLECTOR = {
    GATE_BENCH_EXACT: r"^cost\.(Cost|CollectorCost)\.",
    GATE_BENCH_TIMED: r"^hot_slice\.(HotSlice|Paired)\.",
    GATE_BENCH_HOT: GATE_BENCH_HOT,
    GATE_BENCH_PAIRED: r"^hot_slice\.Paired\.",
    GATE_BENCH_AGAINST: r"^hot_slice\.AgainstBase\.",
}
# Seconds per benchmark class of the quick profile on the 2-vCPU development machine, measured on a base from a fresh
# clone with an empty result cache (``fusegate profile-time``), setup_cache included: HotSlice in 6 processes per
# cell, the paired suites in 3; the lockstep suites on a head whose every kernel changed. The estimate of a machine
# that has no asv results yet (``gate.runner.asvrun``, ``gate.meter.plan``).
SUITE_SECONDS = {
    "cost.Cost": 82.0,  # cold: nothing reused
    "cost.CollectorCost": 1.0,
    "collector.CollectorCheck": 7.5,
    "collector.CollectorPaired": 15.0,
    "hot_slice.HotSlice": 65.0,
    "hot_slice.Paired": 25.0,
    "hot_slice.AgainstBase": 120.0,
    "collector.CollectorAgainstBase": 45.0,
}
PAIRED_ROUNDS = 3  # asv honours a class's ``rounds`` for timing benchmarks only; tracks need ``-a rounds=N``


def gate_asv_runs(
    rounds: int | None = None, *, paired_rounds: int = PAIRED_ROUNDS, collector: bool = True
) -> list[tuple[str, ...]]:
    """The ``asv run`` arguments that measure the gate's suites: the exact ones once, the timed ones in
    ``rounds`` processes per cell, or HotSlice in its own (``FUSEGATE_BENCH_HOT_ROUNDS``, 6 short processes) and
    the paired suites (asv tracks, whose class ``rounds`` asv ignores) in ``paired_rounds``. ``collector=False``
    leaves the collector's suites out."""
    if rounds:
        runs = [("--bench", GATE_BENCH_EXACT), ("--bench", GATE_BENCH_TIMED, "-a", f"rounds={rounds}")]
    else:
        runs = [
            ("--bench", GATE_BENCH_EXACT),
            ("--bench", GATE_BENCH_HOT),
            ("--bench", GATE_BENCH_PAIRED, "-a", f"rounds={paired_rounds}"),
        ]
    return runs if collector else [(a, _WITHOUT_COLLECTOR[b], *rest) for a, b, *rest in runs]


def gate_bench_against(*, collector: bool = True) -> str:
    """``asv run --bench`` of the lockstep pass, with or without the collector's suite."""
    return GATE_BENCH_AGAINST if collector else _WITHOUT_COLLECTOR[GATE_BENCH_AGAINST]


# A machine with several NUMA nodes is measured at several placements per commit (gate.meter.plan), each under its
# own asv machine name, ``<machine>__<label>``, and judged on its own: node<N> (one node bound) or interleaved.
# "__" because no hostname (asv's default machine name) has "_": a cluster's compute-node12 stays a machine.
PLACEMENT_LABEL = re.compile(r"node[0-9]+|interleaved")


def placement_machine(machine: str, label: str) -> str:
    """The asv machine name of ``machine``'s placement ``label`` ("" for a machine's only placement)."""
    if label and not PLACEMENT_LABEL.fullmatch(label):
        raise ValueError(f"unknown placement label {label!r}: node<N> or interleaved")
    return f"{machine}__{label}" if label else machine


def host_of(name: str) -> str:
    """The machine a placement's asv machine name belongs to (the name itself when it names no placement)."""
    host, sep, label = name.rpartition("__")
    return host if sep and host and PLACEMENT_LABEL.fullmatch(label) else name


PAIRED = "hot_slice.Paired.track_ratio"
TIME = "hot_slice.HotSlice.time_update_state"
# asv benchmarks whose samples come from sidecar records of this kind (one per benchmark process), not asv.
SIDECAR_PAIRED = {
    PAIRED: sidecar.PAIRED,
    COLLECTOR_PAIRED: sidecar.COLLECTOR_PAIRED,
    AGAINST_BASE: sidecar.AGAINST_BASE,
    COLLECTOR_AGAINST_BASE: sidecar.COLLECTOR_AGAINST_BASE,
}
# The failure records' suite per asv class whose suite is not its module.
SUITE_OF_CLASS = {
    "cost.CollectorCost": "collector_cost",
    "hot_slice.AgainstBase": sidecar.AGAINST_BASE,
    "collector.CollectorAgainstBase": sidecar.COLLECTOR_AGAINST_BASE,
}


def suite_of(benchmark: str) -> str:
    """The failure records' suite of an asv benchmark: its module, or its class's entry in SUITE_OF_CLASS."""
    module, cls = benchmark.split(".")[:2]
    return SUITE_OF_CLASS.get(f"{module}.{cls}", module)


class Verdict(StrEnum):
    """The answer for a (base, head) pair."""

    APPROVE = "approve"
    REJECT = "reject"
    INCONCLUSIVE = "inconclusive"
    ERROR = "error"


class Decision(StrEnum):
    """One row's decision (``gate.stats.decide``)."""

    PASS = "pass"
    FAIL = "fail"
    INCONCLUSIVE = "inconclusive"
    ERROR = "error"  # nothing to decide on: no samples, a failed benchmark, a missing machine
    ACCEPTED = (
        "accepted"  # a fail a maintainer accepted on record for this head (gate.acceptance): not a fail
    )


class Signal(StrEnum):
    """What decided a row (``gate.stats.signals``)."""

    COST = "cost"  # the exact per-call cost under callgrind
    TIME = "time"  # the wall-time interval
    NONE = "none"  # decided where found, without a measurement: correctness, missing data
    BASE = "base"  # a headline row as on the base, not made worse by the head (gate.evaluate.inherited)
    SOURCES = (
        "sources"  # a head-vs-base row of a kernel whose sources are the base's (gate.evaluate.head_vs_base)
    )
    # a paired-head-vs-base row whose baseline's sources changed: the implementation's own rows judge it
    BASELINE = "baseline"
    # a head-vs-base row whose benchmark failed on the base and runs on the head: nothing to time it against
    REPAIRED = "repaired"
    # a cost fail beside a time that is not slower, while the same kernel and scale is faster beyond doubt at
    # another thread count (gate.evaluate.tradeoff): passed or failed by the policy's ``tradeoffs``
    TRADEOFF = "tradeoff"


class Kind(StrEnum):
    """What a row compares (docs/gate.md#reading-a-verdict); one module of ``gate.evaluate`` each."""

    CORRECTNESS = (
        "correctness"  # a benchmark that raised on the head: parity, construction, the collector's check
    )
    IMPL_VS_BASELINE = "impl_vs_baseline"  # an implementation against the baseline, paired in one process
    BEST_THREADS = "best_threads"  # each at its own fastest thread count
    HEAD_VS_BASE = "head_vs_base"  # head against base, in lockstep (or raw times of two moments)
    PAIRED_HEAD_VS_BASE = "paired_head_vs_base"  # the paired ratio to the baseline, head over base
    COLLECTOR_VS_BASELINE = "collector_vs_baseline"  # the collector step against the baseline's
    COLLECTOR_HEAD_VS_BASE = "collector_head_vs_base"  # the collector step, head against base
    METER = "meter"  # how the head was measured (provenance)
    MACHINE = "machine"  # a machine: missing, changed hardware, nothing comparable


EXIT_CODES = {Verdict.APPROVE: 0, Verdict.REJECT: 1, Verdict.INCONCLUSIVE: 2, Verdict.ERROR: 3}


@dataclass(frozen=True, kw_only=True)
class ResultRecord:
    benchmark: str
    task: str
    impl: str
    num_envs: int | None
    threads: int | None
    status: str  # ok | failed
    unit: str
    value: float | None
    samples: list[list[float]]  # one list per benchmark process
    message: str = ""  # why a failed one failed (the sidecar's failure record: asv keeps no exception text)


@dataclass(kw_only=True)
class RunRecord:
    machine: str
    asv_machine: dict
    fingerprint: dict
    fingerprint_hash: str
    software: dict
    placement: dict
    commit: str
    env_name: str
    started_at: datetime
    digest: str
    results: list[ResultRecord] = field(default_factory=list)
    # what it measured and with what: gate.provenance ids of subject and meter, the meter's commit, problems
    provenance: dict = field(default_factory=dict)


# A machine's name (asv's machine name, a token's machine, a URL path segment on the dashboard): letters, digits,
# ``.``, ``_`` and ``-``, starting with a letter or digit, at most 100 characters. Host names fit; a name with a
# ``/``, a blank or a control character is refused when it arrives, so every stored name is a safe path segment.
MACHINE_NAME_MAX = 100
MACHINE_NAME_PATTERN = rf"^[A-Za-z0-9][A-Za-z0-9._-]{{0,{MACHINE_NAME_MAX - 1}}}$"
_MACHINE_NAME = re.compile(MACHINE_NAME_PATTERN)


def machine_name_problem(name: object) -> str | None:
    """Why ``name`` is not a machine name, or None when it is one."""
    if not isinstance(name, str):
        return f"a machine name is a string, got {type(name).__name__}"
    if _MACHINE_NAME.fullmatch(name):
        return None
    return (
        f"{name[:40]!r}{'...' if len(name) > 40 else ''} is not a machine name: use 1-{MACHINE_NAME_MAX} letters, "
        "digits, '.', '_' or '-', starting with a letter or digit (asv run --machine NAME)"
    )


def machine_id(fingerprint: dict) -> str:
    """A stable hash of what makes two machines comparable: CPU, topology and caches.

    Memory sizes are recorded but not hashed: on VMs with ballooned memory a NUMA node's MemTotal drifts by
    128 MB steps between processes (7897 / 8025 / 8153 MB within one run here), which would split one machine
    into several. Host name and kernel are not hashed either, so identical runners compare as one kind.
    """
    keys = ("arch", "cpu_model", "cpu_flags", "logical_cpus", "physical_cores", "sockets", "caches")
    payload = {k: fingerprint[k] for k in keys}
    payload["numa_nodes"] = {node: info["cpus"] for node, info in fingerprint["numa_nodes"].items()}
    payload = json.dumps(payload, sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


@dataclass(frozen=True, kw_only=True)
class ComparisonRecord:
    """One judged cell of an evaluation (``gate.api.schemas.ComparisonOut`` on the wire)."""

    machine: str
    kind: Kind
    task: str
    num_envs: int | None
    threads: int | None
    impl: str
    baseline: str
    detail: str
    ratio: float | None
    low: float | None
    high: float | None
    margin: float
    p_value: float | None
    q_value: float | None
    samples: int
    groups: int
    decision: Decision
    signal: Signal
    cost_ratio: float | None
    reason: str

    def __post_init__(self):  # the store and the wire hand over strings: keep the enums
        for name, enum in (("kind", Kind), ("decision", Decision), ("signal", Signal)):
            object.__setattr__(self, name, enum(getattr(self, name)))


@dataclass(frozen=True, kw_only=True)
class Acceptance:
    """A regression accepted on record (``gate.acceptance``): one cell's fail rows on one pull request's head
    commit, by a user with write access, with the reason and the row's figures when it was accepted. In an
    evaluation, ``accepted`` and ``worse`` count its rows accepted and its rows worse than when accepted."""

    repo: str
    number: int
    head_sha: str
    machine: str
    kind: Kind
    task: str
    impl: str
    num_envs: int | None
    threads: int | None
    login: str
    reason: str
    accepted_at: datetime
    comment_id: int | None = None
    comment_url: str = ""
    ratio: float | None = None  # the worst row's time ratio when accepted
    high: float | None = None  # ... its interval's upper bound
    cost_ratio: float | None = None  # ... its cost ratio, when measured
    accepted: int = 0
    worse: int = 0

    def __post_init__(self):
        object.__setattr__(self, "kind", Kind(self.kind))

    @property
    def key(self) -> tuple:
        return (self.machine, self.kind, self.task, self.impl, self.num_envs, self.threads)


@dataclass(frozen=True, kw_only=True)
class EvaluationRecord:
    """A stored verdict for (base, head), what the routes, the dashboard, the bot and the CLI work with."""

    id: int
    base_sha: str
    head_sha: str
    verdict: Verdict
    policy_source: str
    policy: dict
    reasons: list[str]
    created_at: datetime
    comparisons: list[ComparisonRecord]
    official: bool = True  # False: asked for by a token without the admin role, never the verdict served
    requested_by: str | None = None
    stale: bool = False  # results of base or head arrived after this evaluation started
    acceptances: list[Acceptance] = field(default_factory=list)  # on record for the head when it was judged

    def __post_init__(self):
        object.__setattr__(self, "verdict", Verdict(self.verdict))
