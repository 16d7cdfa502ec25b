"""A collector run timed from outside (``gate.meter.collect``): the report and the per-call timers."""

from __future__ import annotations

import pytest

import kernels
from gate.meter import collect
from gate.meter.calls import CALLS
from kernels.sim import getters
from kernels.sim.collector import PHASES, Collector


@pytest.mark.parametrize("task", kernels.TASKS)
def test_report_has_the_documented_fields(task):
    report = collect.run(Collector(task, "handwritten", num_envs=8, threads=1), 3, warmup=1).to_dict()
    assert set(report["us_per_env_step"]) == set(PHASES)
    assert report["step_ms"]["p95"] >= report["step_ms"]["median"] > 0
    assert report["env_steps_per_s"] > 0 and report["threads"] == 1
    per_step_us = sum(report["us_per_env_step"].values()) * 8
    assert per_step_us == pytest.approx(1e3 * report["env_steps_per_s"] ** -1 * 8 * 1e3, rel=0.05)
    overhead = sum(
        report["us_per_env_step"][p] for p in ("getters", "update_state", "reset", "replay", "other")
    )
    assert report["overhead_us_per_env_step"] == pytest.approx(overhead)


def test_calls_are_timed_in_the_loop_and_unwrapped_afterwards():
    c = Collector("g1_walk", "handwritten", num_envs=8, threads=1, seed=2)
    report = collect.run(c, 4, warmup=1, calls=True)
    calls = report.extra["calls"]
    assert set(calls) == {f"{owner}.{method}" for owner, method in CALLS}
    for once in ("policy.act", "sim.step", "env.fill_snapshot", "kernel.update_state", "kernel._run"):
        assert calls[once]["per_step"] == 1, once
    # the compiled calls derive their keys (no call per key runs): the first observation and each step draw
    # one of the getter stream, each step two of the bookkeeping stream (push, advance) besides the first
    # observation's, and each reset call one of the reset stream
    key_calls = c.env.key_calls
    assert key_calls[getters.GETTERS] == c.steps + 1 and key_calls[getters.BOOKKEEPING] == 2 * c.steps + 1
    assert 1 <= key_calls[getters.RESETS] <= c.steps + 1
    # the kernel's compiled call is part of update_state, so it cannot take longer
    assert calls["kernel._run"]["us_per_env_step"] <= calls["kernel.update_state"]["us_per_env_step"]
    step_us = report.step_s.mean() * 1e6 / 8
    assert calls["sim.step"]["us_per_env_step"] < step_us
    for owner, method in CALLS:  # the timers are gone: the instances show their classes' methods again
        assert method not in vars(c.env.sim if owner == "sim" else getattr(c, owner))
    assert "calls" not in collect.run(c, 1, warmup=0).extra
