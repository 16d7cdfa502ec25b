"""The pair a pull request is judged on: a branch behind its base is judged merged into it, not charged with
what the base changed since it branched."""

from __future__ import annotations

import subprocess

import pytest

from gate import lineage, pair
from tests.gate.builders import commit_files
from tests.gate.gitrepo import git

FILES = {"kernels/walk.py": "SPEED = 1\n", "README.md": "docs\n", "gate/meter/bench.py": "PAIRS = 40\n"}


@pytest.fixture
def behind(tmp_path):
    """main: fork point, then a kernel speedup; the PR branch (from the fork point): a docs change."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    fork = commit_files(repo, FILES, "fork point")
    git(repo, "checkout", "-q", "-b", "pr")
    pr = commit_files(repo, {"README.md": "better docs\n"}, "pr: docs")
    git(repo, "checkout", "-q", "main")
    tip = commit_files(repo, {"kernels/walk.py": "SPEED = 2\n"}, "main: a kernel speedup")
    return repo, fork, pr, tip


def test_a_head_that_contains_its_base_is_judged_as_it_is(behind):
    repo, fork, pr, _ = behind
    found = pair.judged(repo, fork, pr)
    assert (found.base, found.head, found.merged, found.describe()) == (fork, pr, False, "")


def test_a_branch_behind_main_is_judged_merged_and_not_charged_with_mains_later_change(behind):
    repo, _, pr, tip = behind
    found = pair.judged(repo, tip, pr)
    assert found.merged and found.pr_head == pr and found.base == tip
    assert git(repo, "rev-parse", f"{found.head}^1", f"{found.head}^2").split() == [tip, pr]
    assert git(repo, "show", f"{found.head}:kernels/walk.py") == "SPEED = 2"  # main's speedup is in it
    assert git(repo, "show", f"{found.head}:README.md") == "better docs"
    # the PR changes nothing measured: the judged head's subject is the base's, so the base's results judge it
    assert lineage.of(repo, tip, found.head).same_subject
    # compared directly, the head would carry the reverse of main's speedup
    assert not lineage.of(repo, tip, pr).same_subject
    assert "does not contain base" in found.describe()


def test_the_merge_is_the_same_commit_in_every_clone(behind, tmp_path):
    repo, _, pr, tip = behind
    other = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(repo), str(other)], check=True)
    git(other, "fetch", "-q", "origin", "pr:pr")
    made = pair.judged(repo, tip, pr).head
    assert pair.judged(other, tip, pr).head == made
    assert pair.judged(repo, tip, pr).head == made  # kept under a ref: found again, not made again
    assert git(repo, "rev-parse", f"{pair.REF_PREFIX}{pr}-{tip}") == made


def test_a_head_that_does_not_merge_cleanly_is_an_error_that_says_rebase(behind):
    repo, fork, _, tip = behind
    git(repo, "checkout", "-q", "-b", "clash", fork)
    clash = commit_files(repo, {"kernels/walk.py": "SPEED = 3\n"}, "clash")
    with pytest.raises(pair.PairError, match=r"does not merge cleanly .*kernels/walk.py.*rebase it"):
        pair.judged(repo, tip, clash)


def test_fusegate_gate_approves_a_docs_pr_behind_a_kernel_speedup_from_the_bases_results(
    tmp_path, monkeypatch, capsys
):
    import json

    from gate import cli
    from tests.gate.builders import POLICY, measure_results

    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    fork = commit_files(repo, {**FILES, "fusegate-policy.toml": POLICY}, "fork point")
    git(repo, "checkout", "-q", "-b", "pr")
    commit_files(repo, {"README.md": "better docs\n"}, "pr: docs")
    git(repo, "checkout", "-q", "main")
    tip = commit_files(repo, {"kernels/walk.py": "SPEED = 2\n"}, "main: a kernel speedup")
    monkeypatch.setenv("FUSEGATE_REPO", str(repo))
    url = f"sqlite:///{tmp_path / 'store.db'}"
    from gate.runner import trees

    # main's tip measured once; the fork point never was
    results = measure_results(tmp_path / "m", tip, provenance=trees.ids(repo, tip))
    code = cli.main(
        ["gate", "--base", "main", "--head", "pr", "--results", str(results), "--db", url, "--json"]
    )
    out = json.loads(capsys.readouterr().out)
    merged = git(repo, "rev-parse", f"{pair.REF_PREFIX}{git(repo, 'rev-parse', 'pr')}-{tip}")
    assert (code, out["verdict"], out["base_sha"], out["head_sha"]) == (0, "approve", tip, merged)
    git(repo, "checkout", "-q", "-b", "clash", fork)
    commit_files(repo, {"kernels/walk.py": "SPEED = 3\n"}, "clash")
    assert cli.main(["gate", "--base", "main", "--head", "clash", "--db", url]) == 3
    assert "rebase it onto the base" in capsys.readouterr().err
