"""Each row kind declares what it reads (gate.evaluate.reads): every kind has a declaration, and the rounds'
selections derived from them pick exactly the benchmarks the hand-typed patterns picked before."""

from __future__ import annotations

import itertools
import re
from types import SimpleNamespace

import pytest

from gate.domain.vocabulary import Decision, Kind
from gate.evaluate import kinds
from gate.evaluate.reads import Reads, open_cells
from gate.runner import rounds

TASKS, IMPLS, ENVS, THREADS = (
    ("g1_walk", "g1_motion"),
    ("numpy", "handwritten", "assembled"),
    (4096, 32768),
    (1, 2),
)
BENCHMARKS = (
    "hot_slice.HotSlice.time_update_state",
    "hot_slice.Paired.track_ratio",
    "hot_slice.AgainstBase.track_ratio",
    "collector.CollectorPaired.track_ratio",
    "collector.CollectorAgainstBase.track_ratio",
    "collector.CollectorCheck.track_reward_max_diff",
    "cost.Cost.track_instructions",
)
ALL = [
    f"{b}({', '.join(repr(v) for v in combo)})"
    for b in BENCHMARKS
    for combo in itertools.product(TASKS, IMPLS, ENVS, THREADS)
]

# The inverse map as it was typed by hand, kind by kind: the truth the declarations must reproduce.
_TIME = r"hot_slice\.HotSlice\.time_update_state"
_PAIRED = r"hot_slice\.Paired\.track_ratio"
_COLLECTOR_PAIRED = r"collector\.CollectorPaired\.track_ratio"
_AGAINST_BASE = r"hot_slice\.AgainstBase\.track_ratio"
_COLLECTOR_AGAINST_BASE = r"collector\.CollectorAgainstBase\.track_ratio"


def _combo(benchmark, task, impl, num_envs, threads) -> str:
    impl_re = r"'[^']+'" if impl is None else re.escape(repr(impl))
    n = r"\d+" if num_envs is None else str(int(num_envs))
    t = r"\d+" if threads is None else str(int(threads))
    return rf"^{benchmark}\({re.escape(repr(task))}, {impl_re}, {n}, {t}\)$"


def _typed(row, baseline: str) -> list[str]:
    kind, task, impl, n, t = row.kind, row.task, row.impl, row.num_envs, row.threads
    if kind in (Kind.IMPL_VS_BASELINE, Kind.PAIRED_HEAD_VS_BASE):
        return [_combo(_PAIRED, task, impl, n, t)]
    if kind == Kind.BEST_THREADS:
        return [
            _combo(_TIME, task, impl, n, None),
            _combo(_TIME, task, baseline, n, None),
            _combo(_PAIRED, task, impl, n, None),
        ]
    if kind == Kind.HEAD_VS_BASE:
        return [_combo(_AGAINST_BASE, task, impl, n, t)]
    if kind == Kind.COLLECTOR_VS_BASELINE:
        return [_combo(_COLLECTOR_PAIRED, task, impl, n, t)]
    if kind == Kind.COLLECTOR_HEAD_VS_BASE:
        return [_combo(_COLLECTOR_AGAINST_BASE, task, impl, n, t)]
    return []


def _selected(patterns) -> set[str]:
    return {name for name in ALL if any(re.search(p, name) for p in patterns)}


def _row(kind, impl="assembled", *, num_envs=4096, threads=1, task="g1_walk"):
    return SimpleNamespace(kind=kind, task=task, impl=impl, num_envs=num_envs, threads=threads)


def test_every_kind_declares_what_it_reads():
    assert set(kinds.DECLARED) == set(Kind)
    for kind, declared in kinds.DECLARED.items():
        assert isinstance(declared, Reads) and declared.kind is kind
        assert all(read.benchmark in BENCHMARKS for read in declared.rounds), kind


@pytest.mark.parametrize("kind", list(Kind))
@pytest.mark.parametrize(
    "cell",
    [
        dict(impl="assembled"),
        dict(impl="numpy", threads=2, task="g1_motion"),
        dict(impl="handwritten", num_envs=32768),
        dict(impl=None),  # a row of no implementation selects every one
    ],
)
def test_the_declared_selections_match_the_patterns_once_typed_by_hand(kind, cell):
    row = _row(kind, **cell)
    derived = [s.pattern for s in rounds.benches_for(row, "handwritten")]
    assert _selected(derived) == _selected(_typed(row, "handwritten"))
    assert len(derived) == len(_typed(row, "handwritten"))


def test_only_the_kinds_that_read_the_bases_own_samples_get_rounds_on_the_base():
    assert {k for k, d in kinds.DECLARED.items() if d.base_rounds} == {Kind.PAIRED_HEAD_VS_BASE}


def test_open_cells_are_the_inconclusive_ones_under_the_budget():
    def cell(decision, groups):
        return SimpleNamespace(decision=decision, groups=groups)

    cells = [cell(Decision.INCONCLUSIVE, 3), cell(Decision.INCONCLUSIVE, 8), cell(Decision.PASS, 2)]
    assert open_cells(cells, 8) == cells[:1]
    assert open_cells(cells, 9) == cells[:2]


def test_a_rounds_time_derives_from_its_selections_suites():
    chosen = rounds.benches_for(_row(Kind.BEST_THREADS), "handwritten")
    seconds = rounds.seconds(chosen, {"hot_slice.HotSlice": 1.5})
    assert [seconds[s] for s in chosen] == [
        rounds.ROUNDS_STEP * 1.5,
        rounds.ROUNDS_STEP * 1.5,
        rounds.ROUNDS_STEP * rounds.PROCESS_S,  # Paired: not timed in these results yet
    ]
    assert rounds.expected([seconds]) == sum(seconds.values()) + rounds.START_S
