"""More rounds for the undecided cells only: the asv selections behind each kind of row (gate.runner.rounds)."""

from __future__ import annotations

import itertools
import os
import re
import time
from types import SimpleNamespace

import pytest

from gate import provenance
from gate.cli.placements import PlacementRun
from gate.domain.selection import PAIRED_ROUNDS, gate_asv_runs
from gate.policy import Policy
from gate.runner import gating, rounds
from gate.runner import sides as commits

ONE = [PlacementRun("m1")]  # a one-node machine: its only placement, under its asv name


def _measured(side, *machines: str):
    """The side's asv results file on each machine (what rounds append to); returns the side."""
    for machine in machines or ("m1",):
        path = side.results / machine / f"{side.sha[:8]}-existing-py.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("{}")
    return side


TASKS, IMPLS, ENVS, THREADS = (
    ("g1_walk", "g1_motion"),
    ("numpy", "handwritten", "assembled"),
    (4096, 32768),
    (1, 2),
)


def _names(benchmark: str) -> list[str]:
    """Every parameter combination's name as asv matches ``--bench`` against it (strings quoted)."""
    return [
        f"{benchmark}({', '.join(repr(v) for v in combo)})"
        for combo in itertools.product(TASKS, IMPLS, ENVS, THREADS)
    ]


ALL = [
    *_names("hot_slice.HotSlice.time_update_state"),
    *_names("hot_slice.Paired.track_ratio"),
    *_names("collector.CollectorPaired.track_ratio"),
    *_names("cost.Cost.track_instructions"),
    *_names("hot_slice.AgainstBase.track_ratio"),
    *_names("collector.CollectorAgainstBase.track_ratio"),
]


def _row(kind: str, impl="assembled", *, decision="inconclusive", groups=3, threads=1, machine="m1"):
    return SimpleNamespace(
        kind=kind,
        task="g1_walk",
        impl=impl,
        baseline="handwritten",
        num_envs=4096,
        threads=threads,
        decision=decision,
        groups=groups,
        machine=machine,
        detail="",
    )


def _selected(selections) -> set[str]:
    """The combinations asv runs for ``selections`` (``rounds.Selection``s or their ``--bench`` patterns)."""
    patterns = [getattr(s, "pattern", s) for s in selections]
    return {name for name in ALL if any(re.search(p, name) for p in patterns)}


def test_each_kind_selects_exactly_the_benchmarks_behind_it():
    def pick(row):
        return _selected(rounds.benches_for(row, "handwritten"))

    assert pick(_row("impl_vs_baseline")) == {"hot_slice.Paired.track_ratio('g1_walk', 'assembled', 4096, 1)"}
    # head vs base: the lockstep pass of the head against the base, that cell only
    assert pick(_row("head_vs_base", "numpy")) == {
        "hot_slice.AgainstBase.track_ratio('g1_walk', 'numpy', 4096, 1)"
    }
    assert pick(_row("best_threads", threads=2)) == {
        *(
            f"hot_slice.HotSlice.time_update_state('g1_walk', '{i}', 4096, {t})"
            for i in ("assembled", "handwritten")
            for t in THREADS
        ),
        # the paired ratios that bound the row, at every count
        *(f"hot_slice.Paired.track_ratio('g1_walk', 'assembled', 4096, {t})" for t in THREADS),
    }
    assert pick(_row("collector_vs_baseline")) == {
        "collector.CollectorPaired.track_ratio('g1_walk', 'assembled', 4096, 1)"
    }
    assert pick(_row("collector_head_vs_base", "handwritten")) == {
        "collector.CollectorAgainstBase.track_ratio('g1_walk', 'handwritten', 4096, 1)"
    }
    assert pick(_row("correctness")) == set()  # nothing to add: a failure is decided


def test_only_undecided_rows_under_the_budget_on_this_machine_get_rounds():
    rows = [
        _row("impl_vs_baseline"),
        _row("impl_vs_baseline", "numpy", decision="pass"),
        _row("head_vs_base", groups=8),  # the budget is spent
        _row("head_vs_base", "handwritten", machine="m2"),
        _row("impl_vs_baseline"),  # the same selection once
    ]
    patterns = rounds.open_benches(rows, Policy(max_rounds=8, baseline="handwritten"), machine="m1")
    assert _selected(patterns) == {"hot_slice.Paired.track_ratio('g1_walk', 'assembled', 4096, 1)"}
    assert len(patterns) == 1
    assert rounds.bench_args(patterns) == ["--bench", patterns[0].pattern]
    everywhere = rounds.open_benches(rows, Policy(max_rounds=8), machine=None)
    assert "hot_slice.AgainstBase.track_ratio('g1_walk', 'handwritten', 4096, 1)" in _selected(everywhere)
    assert rounds.duet_cells(everywhere) == "g1_walk/handwritten/4096/1"  # the lockstep pass times only it


def test_the_base_gets_rounds_only_for_rows_that_read_its_own_samples():
    """Head vs base is timed in lockstep from the head's side; only paired_head_vs_base reads the base's own."""
    rows = [_row("impl_vs_baseline"), _row("head_vs_base", "numpy"), _row("paired_head_vs_base")]
    policy = Policy(max_rounds=8, baseline="handwritten")
    assert _selected(rounds.open_benches(rows, policy, side="base")) == {
        "hot_slice.Paired.track_ratio('g1_walk', 'assembled', 4096, 1)"
    }
    assert len(_selected(rounds.open_benches(rows, policy, side="head"))) == 2


def test_a_pattern_names_its_benchmark_class():
    for kind, cls in (
        ("impl_vs_baseline", "hot_slice.Paired"),
        ("head_vs_base", "hot_slice.AgainstBase"),
        ("collector_vs_baseline", "collector.CollectorPaired"),
    ):
        (selection,) = rounds.benches_for(_row(kind), "handwritten")
        assert selection.suite == cls


def test_a_commit_other_than_head_is_measured_in_its_own_worktree(tmp_path):
    """``fusegate gate --measure``: HEAD in the repository, any other commit in a worktree of it whose kernels
    the benchmark processes import (ASV_PYTHONPATH, for the repository too), the same worktree on the next call."""
    from gate.cli import measure as measuring
    from tests.gate import gitrepo

    repo = tmp_path / "repo"
    base = gitrepo.commit(repo, policy="version = 1\n", message="base")
    (repo / "marker.txt").write_text("head only\n")
    gitrepo.git(repo, "add", "marker.txt")
    head = gitrepo.commit(repo, message="head")
    here = commits.side_of(repo, "head", head, repo / ".asv" / "results")
    # the tree's code first, whatever the interpreter has installed (an editable install of another checkout);
    # this tree holds no meter of its own, so the running fusegate's checkout follows it
    path = lambda side: measuring._asv_env(side, repo)["ASV_PYTHONPATH"].split(os.pathsep)  # noqa: E731
    assert here.tree == repo and path(here)[0] == str(repo)
    there = commits.side_of(repo, "base", base, repo / ".asv" / "results")
    assert (
        there.tree == repo / ".fusegate" / "worktrees" / base[:12]
        and there.results == there.tree / ".asv" / "results"
    )
    assert gitrepo.git(there.tree, "rev-parse", "HEAD") == base and not (there.tree / "marker.txt").exists()
    assert path(there) == [str(there.tree), str(provenance.meter_root())]
    assert measuring._asv_env(there, repo)["ASV_COMMIT"] == base
    assert commits.side_of(repo, "base", base, repo / ".asv" / "results") == there  # reused


def _evaluation(verdict, rows):
    return SimpleNamespace(
        verdict=verdict, comparisons=rows, policy=Policy(max_rounds=8, baseline="handwritten")
    )


class _Judge(SimpleNamespace):
    """Evaluates again after the rounds: ``then``, decided."""

    def __call__(self, quiet=False):
        return _evaluation(self.then, [])


class _Stuck(SimpleNamespace):
    """Evaluates again after the rounds: the same undecided row, its processes as they were."""

    def __call__(self, quiet=False):
        return _evaluation("inconclusive", [_row("paired_head_vs_base")])


def _judge(then: str, *, base: str, head: str) -> _Judge:
    return _Judge(then=then, base=base, head=head)


def test_more_rounds_measures_the_undecided_cells_on_each_side_until_decided(tmp_path, monkeypatch):
    sides = {
        name: _measured(commits.Side(name, name * 20, tmp_path / name, tmp_path / name / "results"))
        for name in ("base", "head")
    }
    calls = []
    meter = SimpleNamespace(asv=lambda c, *, side, env=None: calls.append((side.name, c[0][0], env)) or 1.0)
    monkeypatch.setattr(
        commits, "per_process", lambda side: {"hot_slice.HotSlice": 0.5, "hot_slice.Paired": 2.0}
    )
    console = SimpleNamespace(print=lambda *a, **k: None)
    open_rows = [_row("impl_vs_baseline"), _row("head_vs_base", "numpy"), _row("paired_head_vs_base")]

    judge = _judge("approve", base="b" * 40, head="h" * 40)
    done = gating.more_rounds(
        judge,
        _evaluation("inconclusive", open_rows),
        ONE,
        time.monotonic() + 600,
        sides,
        console,
        meter=meter,
        again="again",
    )
    assert done.verdict == "approve"
    (base_extra, base_env) = next((extra, env) for name, extra, env in calls if name == "base")
    (head_extra, head_env) = next((extra, env) for name, extra, env in calls if name == "head")
    assert base_extra[:3] == ("--append-samples", "-a", f"rounds={rounds.ROUNDS_STEP}")
    assert _selected(list(head_extra[4::2])) == {
        "hot_slice.Paired.track_ratio('g1_walk', 'assembled', 4096, 1)",
        "hot_slice.AgainstBase.track_ratio('g1_walk', 'numpy', 4096, 1)",
    }
    assert head_env == {"FUSEGATE_BENCH_DUET_CELLS": "g1_walk/numpy/4096/1"}  # the lockstep pass: that cell
    # the base has samples of its own in the paired head-vs-base row only
    assert _selected(list(base_extra[4::2])) == {
        "hot_slice.Paired.track_ratio('g1_walk', 'assembled', 4096, 1)"
    }
    assert base_env is None


def test_more_rounds_stop_at_the_deadline_and_say_the_command_that_goes_on(tmp_path, monkeypatch):
    side = _measured(commits.Side("head", "h" * 40, tmp_path, tmp_path / "results"), "m1", "m1__interleaved")
    meter = SimpleNamespace(asv=lambda *a, **k: pytest.fail("past the deadline: nothing runs"))
    monkeypatch.setattr(commits, "per_process", lambda side: {})
    said = []
    console = SimpleNamespace(print=lambda text, **k: said.append(text))
    judge = SimpleNamespace(base="h" * 40, head="h" * 40)
    undecided = _evaluation("inconclusive", [_row("impl_vs_baseline")])
    done = gating.more_rounds(
        judge,
        undecided,
        ONE,
        time.monotonic() + 5,
        {"head": side},
        console,
        meter=meter,
        again="fusegate run --continue",
    )
    assert done is undecided and "fusegate run --continue" in said[-1]
    spent = _evaluation("inconclusive", [_row("impl_vs_baseline", groups=8)])
    assert (
        gating.more_rounds(
            judge, spent, ONE, time.monotonic() + 600, {"head": side}, console, meter=meter, again="x"
        )
        is spent
    )
    assert "budget of rounds spent" in said[-1]


def test_more_rounds_stop_when_a_round_adds_no_process_to_an_undecided_row(tmp_path, monkeypatch):
    """A row head over base counts the side with fewer processes; when that side is a base measured from another
    checkout (no rounds for it here), the head's rounds leave the row as it was: one round, then the loop says so
    and stops, instead of spending the budget to the deadline."""

    head = _measured(commits.Side("head", "h" * 40, tmp_path / "h", tmp_path / "h" / "results"))
    base = commits.Side("base", "b" * 40, tmp_path / "b", tmp_path / "b" / "results")  # no results here
    calls = []
    meter = SimpleNamespace(asv=lambda batch, *, side, **k: calls.append(side.name))
    monkeypatch.setattr(commits, "per_process", lambda side: {})
    said = []
    console = SimpleNamespace(print=lambda text, **k: said.append(text))
    judge = _Stuck(base="b" * 40, head="h" * 40)
    done = gating.more_rounds(
        judge,
        judge(),
        ONE,
        time.monotonic() + 600,
        {"base": base, "head": head},
        console,
        meter=meter,
        again="fusegate gate --measure",
    )
    assert done.verdict == "inconclusive"
    assert calls == ["head"]  # one round, on the side that can take it
    assert "added no process" in said[-1] and "fusegate gate --measure" in said[-1]


def test_when_not_every_round_fits_the_rows_nearest_a_fail_go_first(tmp_path, monkeypatch):
    """A serial loop's 2-thread rows: time 2x slower, not yet past false-discovery control, a few minutes left.
    The rounds that fit go to the row whose p-value says slower, not to the rows that do not."""

    side = _measured(commits.Side("head", "h" * 40, tmp_path, tmp_path / "results"), "m1", "m1__interleaved")
    calls = []
    meter = SimpleNamespace(asv=lambda batch, **k: calls.append(batch[0][0]))
    monkeypatch.setattr(commits, "per_process", lambda side: {})  # 10 s a process, the default
    console = SimpleNamespace(print=lambda *a, **k: None)
    slower = SimpleNamespace(**vars(_row("head_vs_base", threads=2)), p_value=1e-3)
    unsure = SimpleNamespace(**vars(_row("impl_vs_baseline", "numpy")), p_value=0.4)
    errored = _row("collector_vs_baseline")  # no p-value

    judge = _judge("reject", base="h" * 40, head="h" * 40)
    undecided = _evaluation("inconclusive", [errored, unsure, slower])
    # each selection: 2 processes of 10 s, plus 15 s of asv's start: room for one
    done = gating.more_rounds(
        judge, undecided, ONE, time.monotonic() + 50, {"head": side}, console, meter=meter, again="x"
    )
    assert done.verdict == "reject"
    [extra] = calls
    assert _selected(list(extra[4::2])) == {
        "hot_slice.AgainstBase.track_ratio('g1_walk', 'assembled', 4096, 2)"
    }


def test_the_profile_gives_the_paired_tracks_their_rounds_explicitly():
    """asv honours a class's ``rounds`` for timing benchmarks only: the paired suites (tracks) get ``-a``."""

    exact, hot, paired = gate_asv_runs()
    assert "-a" not in exact and "-a" not in hot
    assert paired[paired.index("-a") + 1] == f"rounds={PAIRED_ROUNDS}" and PAIRED_ROUNDS >= 2
    assert [a for a in gate_asv_runs(5)[1] if a.startswith("rounds=")] == ["rounds=5"]


def test_a_head_judged_on_the_bases_results_gets_rounds_on_the_base(monkeypatch, tmp_path):
    """A docs-only head is not measured: its undecided rows are the base's, so the base gets their rounds."""
    from gate.domain.vocabulary import Verdict

    calls = []
    monkeypatch.setattr(commits, "per_process", lambda side: {})
    meter = SimpleNamespace(asv=lambda batch, *, side, **kw: calls.append((side.name, batch)))
    policy = Policy(max_rounds=8, baseline="handwritten")
    undecided = SimpleNamespace(
        verdict=Verdict.INCONCLUSIVE, policy=policy, comparisons=[_row("collector_vs_baseline")]
    )
    decided = SimpleNamespace(verdict=Verdict.APPROVE, policy=policy, comparisons=[])

    class Judge:  # evaluates again after the rounds: decided now
        base, head = "b" * 40, "h" * 40

        def __call__(self, *, quiet=False):
            return decided

    judge = Judge()
    base = _measured(SimpleNamespace(name="base", sha="b" * 40, results=tmp_path))
    console = SimpleNamespace(print=lambda *a, **k: None)
    out = gating.more_rounds(
        judge, undecided, ONE, time.monotonic() + 3600, {"base": base}, console, meter=meter, again=""
    )
    assert out is decided
    [(side, [(extra, _, _)])] = calls
    assert side == "base"
    assert _selected([a for a in extra if "(" in a]) == {
        "collector.CollectorPaired.track_ratio('g1_walk', 'assembled', 4096, 1)"
    }


def test_rounds_go_to_the_placement_whose_machine_the_row_is_of(tmp_path, monkeypatch):
    """A two-node machine measured at two placements: an undecided row of ``m1__interleaved`` gets its rounds
    under that asv machine name, with that placement's environment; the bound node's rows are decided."""

    where = [
        PlacementRun("m1__node0", "node0", {"FUSEGATE_CPUS": "0-3", "FUSEGATE_MEMPOLICY": "bind:0"}),
        PlacementRun(
            "m1__interleaved",
            "interleaved",
            {"FUSEGATE_CPUS": "0-7", "FUSEGATE_MEMPOLICY": "interleave:0,1"},
            first=False,
        ),
    ]
    side = _measured(commits.Side("head", "h" * 40, tmp_path, tmp_path / "results"), "m1", "m1__interleaved")
    calls = []
    meter = SimpleNamespace(asv=lambda batch, **k: calls.append(batch[0]))
    monkeypatch.setattr(commits, "per_process", lambda side: {})

    rows = [
        _row("impl_vs_baseline", machine="m1__interleaved"),
        _row("impl_vs_baseline", decision="pass", machine="m1__node0"),
    ]
    console = SimpleNamespace(print=lambda *a, **k: None)
    gating.more_rounds(
        _judge("approve", base="h" * 40, head="h" * 40),
        _evaluation("inconclusive", rows),
        where,
        time.monotonic() + 600,
        {"head": side},
        console,
        meter=meter,
        again="x",
    )
    [(extra, _, env)] = calls
    assert extra[-2:] == ("--machine", "m1__interleaved")
    assert env == {
        "FUSEGATE_CPUS": "0-7",
        "FUSEGATE_MEMPOLICY": "interleave:0,1",
        "FUSEGATE_ASV_MACHINE": "m1__interleaved",
    }
    assert _selected([a for a in extra if "(" in a]) == {
        "hot_slice.Paired.track_ratio('g1_walk', 'assembled', 4096, 1)"
    }


def test_a_runner_asks_for_and_measures_each_placements_open_cells(tmp_path, monkeypatch):
    """``fusegate measure --open-cells`` on a two-node machine: the service is asked once per placement (its asv
    machine name), and each placement's open cells are measured there; exit 1 when no placement has any."""
    from argparse import Namespace

    from gate.cli import measure as measuring
    from gate.cli import placements
    from gate.cli.commands import measure as command
    from gate.runner import upload

    where = [
        PlacementRun("m1__node0", "node0", {"FUSEGATE_CPUS": "0-3"}),
        PlacementRun("m1__interleaved", "interleaved", {"FUSEGATE_CPUS": "0-7"}, first=False),
    ]
    monkeypatch.setattr(placements, "here", lambda machine, say: where)
    monkeypatch.setenv("FUSEGATE_URL", "http://service.invalid")
    open_row = {**vars(_row("impl_vs_baseline", machine="m1__interleaved")), "baseline": "handwritten"}
    answers = {
        "m1__node0": {"more": False},
        "m1__interleaved": {"more": True, "budget": 8, "cells": [open_row]},
    }
    asked = []
    monkeypatch.setattr(
        upload, "more_rounds", lambda **k: asked.append(k["machine"]) or answers[k["machine"]]
    )
    calls = []
    monkeypatch.setattr(
        measuring, "_asv_calls", lambda batch, *, side, **k: calls.append((side.name, batch[0]))
    )
    monkeypatch.setattr(command, "gather", lambda side, results: None)
    sides = {
        name: _measured(commits.Side(name, name[0] * 40, tmp_path, tmp_path / "results"), "m1__interleaved")
        for name in ("base", "head")
    }
    console = SimpleNamespace(print=lambda *a, **k: None)
    args = Namespace(rounds=None)
    code = command._open_cells(args, sides, "m1", tmp_path, console, tmp_path)
    assert code == 0 and asked == ["m1__node0", "m1__interleaved"]
    [(side, (extra, _, env))] = calls
    assert side == "head" and extra[-2:] == ("--machine", "m1__interleaved") and env["FUSEGATE_CPUS"] == "0-7"
    answers["m1__interleaved"] = {"more": False}
    calls.clear()
    assert command._open_cells(args, sides, "m1", tmp_path, console, tmp_path) == 1 and not calls


def test_no_rounds_append_to_a_side_whose_results_are_elsewhere(tmp_path, monkeypatch):
    """The store has the base's run, measured from another checkout: appending rounds here would start a results
    file with the new samples only, and ingesting it would replace the stored run. The base gets no rounds; the
    head, whose results are here, does."""
    sides = {
        "base": commits.Side("base", "b" * 40, tmp_path, tmp_path / "elsewhere"),  # nothing here
        "head": _measured(commits.Side("head", "h" * 40, tmp_path, tmp_path / "results")),
    }
    calls, said = [], []
    meter = SimpleNamespace(asv=lambda batch, *, side, **k: calls.append(side.name))
    monkeypatch.setattr(commits, "per_process", lambda side: {})

    console = SimpleNamespace(print=lambda text, **k: said.append(text))
    rows = [_row("paired_head_vs_base")]  # samples on both sides
    gating.more_rounds(
        _judge("approve", base="b" * 40, head="h" * 40),
        _evaluation("inconclusive", rows),
        ONE,
        time.monotonic() + 600,
        sides,
        console,
        meter=meter,
        again="x",
    )
    assert calls == ["head"]
    assert any("has results in the store but none in" in text for text in said)
