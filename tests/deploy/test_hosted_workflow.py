"""The hosted-runner measuring workflow (deploy/github/fusegate-hosted.yml) tested the way it runs: its measuring
step is a script, run here on a clean repository whose head changes a kernel."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.gate.builders import NARROW, WHO, copy_of_this_tree, git_as_tester
from tools import scenarios

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / "deploy" / "github" / "fusegate-hosted.yml"


def test_the_job_checks_out_the_base_runs_for_forks_and_hands_the_judge_its_results():
    workflow = yaml.safe_load(WORKFLOW.read_text())
    job = workflow["jobs"]["measure"]
    assert "if" not in job  # fork pull requests run too: nothing here needs a secret
    steps = job["steps"]
    assert steps[0]["with"]["ref"] == "${{ github.event.pull_request.base.sha }}"
    assert steps[0]["with"]["persist-credentials"] is False  # no token in .git/config beside the head's code
    [measure] = [s for s in steps if "gate-pr.sh" in s.get("run", "")]
    # a verdict (0-3) is for reading, the judge posts the status; a run that could not measure (64/78) fails
    assert measure["run"] == 'deploy/github/gate-pr.sh "$BASE" "$HEAD" || [ "$?" -le 3 ]'
    names = [s.get("name", s.get("uses", "")) for s in steps]
    assert names.index("Name the pull request for the judge") < names.index(measure["name"])
    [upload] = [s for s in steps if s.get("uses", "").startswith("actions/upload-artifact")]
    assert upload["if"] == "always()"  # a failed measurement still hands the judge its pull request
    paths = upload["with"]["path"].split()
    assert {".asv/results", ".fusegate/worktrees/*/.asv/results", ".fusegate/pr.json"} <= set(paths)
    assert (ROOT / "deploy" / "github" / "gate-pr.sh").stat().st_mode & 0o111


def test_the_verdict_codes_pass_the_step_and_the_others_fail_it():
    """The measuring step's shell line, run with a stand-in for the script's exit code."""
    for code, ok in ((0, True), (1, True), (2, True), (3, True), (64, False), (78, False)):
        line = f'(exit {code}) || [ "$?" -le 3 ]'
        assert (subprocess.run(["bash", "-c", line], check=False).returncode == 0) is ok, code


@pytest.mark.slow
@pytest.mark.skipif(
    shutil.which("valgrind") is None, reason="valgrind is not installed (apt-get install valgrind)"
)
def test_the_script_rejects_a_head_with_more_instructions_and_writes_the_summary(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    base = copy_of_this_tree(repo)
    scenarios.apply(repo, scenarios.SCENARIOS["extra_work"], "hosted")
    git_as_tester(repo, "commit", "-q", "-am", "head: extra work in the assembled g1_walk kernel")
    head = git_as_tester(repo, "rev-parse", "HEAD")
    git_as_tester(repo, "checkout", "-q", "--detach", base)  # the workflow checks out the base
    summary = tmp_path / "summary.md"
    env = {**os.environ, **WHO, **NARROW, "GITHUB_STEP_SUMMARY": str(summary)}
    env.pop("VIRTUAL_ENV", None)
    env.pop("PYTHONPATH", None)
    done = subprocess.run(
        ["bash", "deploy/github/gate-pr.sh", base, head],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    text = summary.read_text() if summary.exists() else ""
    assert done.returncode == 1, done.stdout[-2000:] + done.stderr[-3000:]
    assert text.startswith("### fusegate: reject")
    assert "| **fail** | cost |" in text and "g1_walk" in text
