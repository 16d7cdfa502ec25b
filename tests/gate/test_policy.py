"""fusegate-policy.toml: parsed strictly, read from the base commit, refs checked before git sees them."""

from dataclasses import replace
from pathlib import Path

import pytest

from gate import subject
from gate.git import RefError, resolve
from gate.policy import (
    POLICY_FILE,
    MarginRule,
    Policy,
    PolicyError,
    judged_by,
    read_from_base,
)
from tests.gate import gitrepo

ROOT = Path(__file__).resolve().parents[2]


def test_the_repositorys_policy_parses():
    policy = Policy.from_toml((ROOT / POLICY_FILE).read_text(), source=POLICY_FILE)
    assert policy.baseline == "handwritten" and "assembled" in policy.compare
    assert policy.min_rounds <= policy.max_rounds
    assert policy.collector_margin == 0.03


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ('compare = "assembled"', "compare must be list"),
        ('max_rounds = "3"', "max_rounds must be int"),
        ("margins = [1]", "margins must be a list of tables"),
        ("margin = true", "margin must be int or float"),
        ("threads = [1.5]", "threads item must be int"),
        ("margin = 1.5", "fraction in [0, 1)"),
        ("collector_margin = -0.1", "collector_margin must be a fraction in [0, 1)"),
        ('collector_margin = "3%"', "collector_margin must be int or float"),
        ("marign = 0.1", "unknown key(s) marign"),
        ("min_rounds = 9", "min_rounds <= max_rounds"),
        ("margins = [{ task = 'g1_walk' }]", "needs margin"),
        ("version = 2", "not supported"),
        ("margin = ", "not valid TOML"),
    ],
)
def test_bad_policies_are_refused_by_name(text, says):
    with pytest.raises(PolicyError, match=r"^policy\.toml: ") as info:
        Policy.from_toml(text, source="policy.toml")
    assert says in str(info.value)


def test_margin_overrides_last_match_wins():
    p = Policy.from_toml(
        'margin = 0.03\nmargins = [{ task = "g1_motion", margin = 0.05 }, { task = "g1_motion", num_envs = 4096, margin = 0.08 }]',
        source="p",
    )
    assert (
        p.margin_for("g1_walk", 4096),
        p.margin_for("g1_motion", 32768),
        p.margin_for("g1_motion", 4096),
    ) == (
        0.03,
        0.05,
        0.08,
    )


def test_policy_is_read_at_the_base_commit(tmp_path):
    base = gitrepo.commit(tmp_path, policy="margin = 0.02\n")
    head = gitrepo.commit(tmp_path, policy="margin = 0.5\n")
    policy, source = read_from_base(tmp_path, base)
    assert policy.margin == 0.02 and base[:12] in source
    assert read_from_base(tmp_path, head)[0].margin == 0.5


def test_a_base_without_the_file_gets_the_default_and_says_so(tmp_path):
    base = gitrepo.commit(tmp_path)
    policy, source = read_from_base(tmp_path, base)
    assert policy == replace(Policy(), baseline="handwritten", compare=("assembled",))
    assert (policy.baseline, policy.compare) == (
        subject.UNDECLARED.baseline,
        subject.UNDECLARED.profile("quick").paired,
    )
    assert "built-in default" in source


def test_the_default_baseline_is_the_one_the_base_declares(tmp_path):
    """The policy names a baseline or takes the base's ``[tool.fusegate]`` one; a head's declaration is not
    read, and a declaration that cannot be read stops the gate with what is wrong."""
    table = (ROOT / "pyproject.toml").read_text().split("[tool.fusegate]")[1].split("[tool.pytest")[0]
    (tmp_path / "pyproject.toml").parent.mkdir(parents=True, exist_ok=True)
    gitrepo.commit(tmp_path)
    (tmp_path / "pyproject.toml").write_text("[tool.fusegate]" + table.replace('"handwritten"', '"fused"'))
    gitrepo.git(tmp_path, "add", "pyproject.toml")
    base = gitrepo.commit(tmp_path, policy="margin = 0.02\n")
    assert read_from_base(tmp_path, base)[0].baseline == "fused"
    # the implementations compared with it default to those the declared quick grid pairs with it
    assert read_from_base(tmp_path, base)[0].compare == ("assembled",)
    named = gitrepo.commit(tmp_path, policy='baseline = "mine"\ncompare = []\n')
    assert read_from_base(tmp_path, named)[0].baseline == "mine"
    assert read_from_base(tmp_path, named)[0].compare == ()
    (tmp_path / "pyproject.toml").write_text("[tool.fusegate]\nversion = 3\n")
    gitrepo.git(tmp_path, "add", "pyproject.toml")
    broken = gitrepo.commit(tmp_path, policy="margin = 0.02\n")
    with pytest.raises(PolicyError, match=r"names no baseline, and .*version 3 is not supported"):
        read_from_base(tmp_path, broken)


def test_an_unknown_base_cannot_be_judged(tmp_path):
    gitrepo.commit(tmp_path)
    with pytest.raises(PolicyError, match="not in the repository"):
        read_from_base(tmp_path, "ab" * 20)


@pytest.mark.parametrize("ref", ["--output=/tmp/x", "-h", "", "no-such-branch"])
def test_refs_that_are_options_or_unknown_are_refused(tmp_path, ref):
    gitrepo.commit(tmp_path)
    with pytest.raises(RefError):
        resolve(tmp_path, ref)


def test_an_evaluations_policy_record_is_typed_again_and_refuses_what_a_file_would():
    """The record an evaluation carries (``to_dict``, in memory or stored as JSON) is the policy again."""
    import json
    from types import SimpleNamespace

    policy = Policy(
        required_machines=("m1",), margins=(MarginRule(margin=0.05, task="g1_walk"),), max_rounds=6
    )
    assert Policy.from_dict(policy.to_dict()) == policy
    assert judged_by(SimpleNamespace(policy=json.loads(json.dumps(policy.to_dict())))) == policy
    assert judged_by(SimpleNamespace(policy=policy)) is policy
    assert judged_by(SimpleNamespace(policy={})) is None  # an evaluation that could not read its policy
    with pytest.raises(PolicyError, match="unknown key"):
        Policy.from_dict({**policy.to_dict(), "rounds": 3})
