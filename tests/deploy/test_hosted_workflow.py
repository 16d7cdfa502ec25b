"""The hosted-runner workflow (deploy/github/fusegate-hosted.yml) tested the way it runs: its judging step is a
script, run here on a clean repository whose head changes a kernel."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from benchmarks import scenarios
from tests.gate.builders import NARROW, WHO, copy_of_this_tree, git_as_tester

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / "deploy" / "github" / "fusegate-hosted.yml"


def test_the_job_checks_out_the_base_runs_for_forks_and_its_exit_code_is_the_check():
    workflow = yaml.safe_load(WORKFLOW.read_text())
    job = workflow["jobs"]["gate"]
    assert "if" not in job  # fork pull requests run too: nothing here needs a secret
    steps = job["steps"]
    assert steps[0]["with"]["ref"] == "${{ github.event.pull_request.base.sha }}"
    (judge,) = [s for s in steps if s.get("name") == "Measure and judge"]
    assert (
        judge["run"] == 'deploy/github/gate-pr.sh "$BASE" "$HEAD"'
    )  # no "|| true": the exit code is the check
    assert (ROOT / "deploy" / "github" / "gate-pr.sh").stat().st_mode & 0o111


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
