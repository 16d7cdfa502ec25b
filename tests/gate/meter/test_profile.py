"""The benchmark profile: every FUSEGATE_BENCH_* setting read once, checked at the boundary."""

import pytest

from gate.meter.plan import PlacementPlan
from gate.meter.profile import Profile, ProfileError


def test_defaults_when_nothing_is_set():
    p = Profile.from_env({})
    assert p == Profile() and p.name == "quick" and p.threads is None and not p.with_tracks
    assert Profile.from_env({"FUSEGATE_BENCH_PROFILE": "full"}).with_tracks


def test_values_are_parsed_once_into_types():
    env = {
        "FUSEGATE_BENCH_PROFILE": "full",
        "FUSEGATE_BENCH_THREADS": "1,8,16",
        "FUSEGATE_BENCH_IMPLS": "handwritten, assembled",
        "FUSEGATE_BENCH_HOT_ROUNDS": "2",
        "FUSEGATE_BENCH_TRACKS": "0",
        "FUSEGATE_BENCH_DUET_CELLS": "g1_walk/assembled/4096/2",
        "FUSEGATE_BENCH_DUET_MORE": "0",
        "FUSEGATE_UNRELATED": "x",
    }
    p = Profile.from_env(env)
    assert (p.name, p.threads, p.impls) == ("full", (1, 8, 16), ("handwritten", "assembled"))
    assert (p.hot_rounds, p.with_tracks) == (2, False)
    assert p.duet_cells == "g1_walk/assembled/4096/2" and p.duet_more == 0
    # and back: what a plan or the measure command hands a benchmark process
    assert Profile.from_env(p.env()) == p


@pytest.mark.parametrize(
    ("variable", "value", "says"),
    [
        ("FUSEGATE_BENCH_PROFILE", "fast", "expected one of quick, full"),
        ("FUSEGATE_BENCH_THREADS", "1,two", "comma-separated whole numbers"),
        ("FUSEGATE_BENCH_ENVS", "0", "at least 1"),
        ("FUSEGATE_BENCH_HOT_ROUNDS", "2,3", "one whole number"),
        ("FUSEGATE_BENCH_LAYOUT", "packed", "random, fixed"),
        ("FUSEGATE_BENCH_TRACKS", "yes", "0, 1"),
        ("FUSEGATE_BENCH_DUET_MORE", "-1", "0 or more"),
    ],
)
def test_a_bad_value_names_the_variable_and_what_it_takes(variable, value, says):
    with pytest.raises(ProfileError, match=says) as info:
        Profile.from_env({variable: value})
    assert variable in str(info.value) and repr(value) in str(info.value)


def test_a_plan_hands_its_counts_over_even_at_their_defaults():
    plan = PlacementPlan(label="", cpus=(0, 1), mem="default", threads=(1, 2), hot_rounds=6, paired_rounds=3)
    env = plan.env()
    assert env["FUSEGATE_BENCH_HOT_ROUNDS"] == "6" and env["FUSEGATE_BENCH_PAIRED_ROUNDS"] == "3"
    assert Profile.from_env(env).threads == (1, 2)


def test_every_variable_has_a_name():
    names = Profile.variables()
    assert "FUSEGATE_BENCH_PROFILE" in names and "FUSEGATE_BENCH_COLLECTOR_ENVS" in names
    assert len(set(names)) == len(names)
