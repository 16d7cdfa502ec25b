"""The hosted judge (deploy/github/judge-pr.sh -> ``fusegate judge``) against the loopback GitHub: a measuring run's
artifact in, the ``fusegate`` and ``fusegate/verdict`` statuses on the head and one PR comment out; a malformed or
foreign artifact gets an error status and no verdict."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gate import cli
from gate.bot import report
from tests.gate import gitrepo
from tests.gate.bot.conftest import POLICY, REPO
from tests.gate.builders import measure_results

ROOT = Path(__file__).resolve().parents[3]
RUN_URL = "https://github.example/acme/robots/actions/runs/42"
ACTIONS = "github-actions[bot]"


@pytest.fixture
def pr(tmp_path, github):
    """A repository with base and head, pull request #7 of it on the fake GitHub (an Actions token: GET /user
    refused, comments by github-actions[bot])."""
    path, base, head = gitrepo.base_and_head(tmp_path / "repo", policy=POLICY)
    github.pulls[f"{REPO}#7"] = {
        "number": 7,
        "state": "open",
        "head": {"sha": head},
        "base": {"sha": base, "ref": "main"},
    }
    github.user_forbidden, github.login = True, ACTIONS
    return path, base, head


def artifact(root: Path, base: str, head: str, *, number=7, pr_head=None, **head_effects) -> Path:
    """What the measuring job uploads: the base's results in the checkout, the head's in its worktree, pr.json."""
    measure_results(root / ".asv", base)
    measure_results(
        root / ".fusegate" / "worktrees" / f"{head[:12]}-m{base[:12]}" / ".asv", head, seed=1, **head_effects
    )
    pr_json = {"format": 1, "number": number, "base_sha": base, "head_sha": pr_head or head}
    (root / ".fusegate" / "pr.json").write_text(json.dumps(pr_json))
    return root


def env(github, repo: Path, head: str, *, number: str = "", conclusion: str = "success") -> dict:
    return {
        "FUSEGATE_GITHUB_TOKEN": github.token,
        "FUSEGATE_GITHUB_API_URL": github.url,
        "FUSEGATE_GITHUB_BACKOFF_S": "0.01",
        "FUSEGATE_REPO": str(repo),
        "GITHUB_REPOSITORY": REPO,
        "RUN_HEAD_SHA": head,
        "RUN_CONCLUSION": conclusion,
        "RUN_URL": RUN_URL,
        "RUN_PR": number,  # empty: a fork's run names no pull request
    }


def judge(monkeypatch, artifact_dir: Path, values: dict) -> int:
    """``fusegate judge`` in this process, with the arguments judge-pr.sh gives it."""
    for key, value in values.items():
        monkeypatch.setenv(key, value)
    return cli.main(
        [
            "judge",
            str(artifact_dir),
            "--repo",
            values["GITHUB_REPOSITORY"],
            "--run-head",
            values["RUN_HEAD_SHA"],
            "--run-conclusion",
            values["RUN_CONCLUSION"],
            "--run-url",
            RUN_URL,
            "--number",
            values["RUN_PR"],
        ]
    )


def statuses(github, sha: str) -> dict[str, list[tuple[str, str]]]:
    found: dict[str, list[tuple[str, str]]] = {}
    for s in github.statuses.get(sha, []):
        found.setdefault(s["context"], []).append((s["state"], s["description"]))
        assert s["target_url"] == RUN_URL
    return found


def test_a_forks_run_is_judged_by_the_script_and_posts_both_statuses_and_one_comment(tmp_path, github, pr):
    path, base, head = pr
    done = subprocess.run(
        ["bash", str(ROOT / "deploy" / "github" / "judge-pr.sh"), str(artifact(tmp_path / "a", base, head))],
        cwd=path,
        env={
            **os.environ,
            **env(github, path, head),
            "FUSEGATE_JUDGE": f"{sys.executable} -m gate.cli",
            "PYTHONPATH": str(ROOT),
        },
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    posted = statuses(github, head)
    assert [state for state, _ in posted[report.CONTEXT]] == ["success"]
    assert posted[report.CONTEXT][0][1].startswith("approve: all")
    assert posted[report.VERDICT_CONTEXT] == posted[report.CONTEXT]
    [comment] = github.comments[f"{REPO}#7"]
    assert comment["body"].startswith(report.MARKER) and "### fusegate: approve" in comment["body"]
    assert comment["user"]["login"] == ACTIONS and f"verdict]({RUN_URL})" in comment["body"]
    assert f"base `{base[:12]}` (main) -> head `{head[:12]}`" in comment["body"]
    assert github.calls_to("/pulls/7", "GET")  # the artifact's number, checked with the API
    assert f"{REPO}@{head[:12]}: success: approve" in done.stdout and "(#7)" in done.stdout


def test_a_rerun_edits_the_comment_and_an_inconclusive_verdict_is_red_but_told_apart(
    tmp_path, github, pr, monkeypatch
):
    path, base, head = pr
    values = env(github, path, head, number="7")
    assert judge(monkeypatch, artifact(tmp_path / "a1", base, head), values) == 0
    undecided = artifact(
        tmp_path / "a2", base, head, paired_effect=lambda c: 1.03 if c["impl"] == "assembled" else 1.0
    )
    assert judge(monkeypatch, undecided, values) == 0
    posted = statuses(github, head)
    required, word = posted[report.CONTEXT][-1], posted[report.VERDICT_CONTEXT][-1]
    assert (
        required[0] == "failure"
        and required[1].startswith("inconclusive: ")
        and "need more rounds" in required[1]
    )
    assert word == ("pending", required[1])  # never red beside the required one
    [comment] = github.comments[f"{REPO}#7"]  # the first run's comment, edited
    assert len(github.calls_to("/issues/7/comments", "POST")) == 1 and github.calls_to(
        "/issues/comments/", "PATCH"
    )
    body = " ".join(comment["body"].split())  # markdown wraps lines; a newline in code renders as a blank
    assert "### fusegate: inconclusive" in body and "undecided cells need more rounds" in body
    assert f"`fusegate gate --base {base[:12]} --head {head[:12]} --measure --max-minutes 40`" in body
    assert "runner-1 impl_vs_baseline g1_" in body


def test_an_artifact_of_another_head_is_refused_with_an_error_status(tmp_path, github, pr, monkeypatch):
    path, base, head = pr
    other = "e" * 40
    forged = artifact(tmp_path / "a", base, head, pr_head=other)
    assert judge(monkeypatch, forged, env(github, path, head)) == 3
    [(state, why)] = statuses(github, head)[report.CONTEXT]
    assert state == "error" and why.startswith(
        f".fusegate/pr.json names head {other[:12]}, but the measuring run"
    )
    assert statuses(github, head)[report.VERDICT_CONTEXT] == [("error", f"error: {why}")]
    assert f"{REPO}#7" not in github.comments  # a fork's number that names another head is not trusted
    # the same from a run whose event names the pull request: the error is also its comment
    assert judge(monkeypatch, forged, env(github, path, head, number="7")) == 3
    [comment] = github.comments[f"{REPO}#7"]
    assert "### fusegate: error" in comment["body"] and "names head" in comment["body"]


@pytest.mark.parametrize(
    ("write", "conclusion", "why"),
    [
        (lambda root: None, "failure", "the measuring run ended failure: nothing judged; see " + RUN_URL),
        (lambda root: None, "success", "the measuring run uploaded no artifact (it ended success)"),
        (
            lambda root: (
                (root / ".fusegate").mkdir(parents=True) or (root / ".fusegate" / "pr.json").write_text("[1]")
            ),
            "success",
            ".fusegate/pr.json must be a JSON object, got list",
        ),
        (
            lambda root: (
                (root / ".fusegate").mkdir(parents=True)
                or (root / ".fusegate" / "pr.json").write_text(
                    json.dumps(
                        {"format": 1, "number": "7; rm -rf /", "base_sha": "a" * 40, "head_sha": "b" * 40}
                    )
                )
            ),
            "success",
            ".fusegate/pr.json: number must be a pull request number",
        ),
    ],
)
def test_a_failed_empty_or_malformed_run_gets_an_error_that_says_why(
    tmp_path, github, pr, monkeypatch, write, conclusion, why
):
    path, _, head = pr
    root = tmp_path / "artifact"
    root.mkdir()
    write(root)
    assert judge(monkeypatch, root, env(github, path, head, conclusion=conclusion)) == 3
    [(state, description)] = statuses(github, head)[report.CONTEXT]
    assert state == "error" and description.startswith(why[:130]), description


def test_a_pull_request_whose_head_moved_on_is_not_judged(tmp_path, github, pr, monkeypatch):
    path, base, head = pr
    newer = gitrepo.commit(path, message="a newer push")
    github.pulls[f"{REPO}#7"]["head"]["sha"] = newer
    assert judge(monkeypatch, artifact(tmp_path / "a", base, head), env(github, path, head)) == 3
    [(state, why)] = statuses(github, head)[report.CONTEXT]
    assert state == "error" and why.startswith(f"pull request #7's head is {newer[:12]}, not the measured")
    assert f"{REPO}#7" not in github.comments and newer not in github.statuses


def test_a_base_off_the_pull_requests_base_branch_is_refused(tmp_path, github, pr, monkeypatch):
    path, _, head = pr
    gitrepo.git(path, "checkout", "-q", "--orphan", "elsewhere")
    stranger = gitrepo.commit(path, policy="max_rounds = 99\n", message="a laxer policy, not on main")
    assert judge(monkeypatch, artifact(tmp_path / "a", stranger, head), env(github, path, head)) == 3
    [(state, why)] = statuses(github, head)[report.CONTEXT]
    assert state == "error" and why.startswith(
        f"base {stranger[:12]} is not on pull request #7's base branch"
    )


def test_a_pull_request_behind_its_base_is_judged_merged_into_it(tmp_path, github, pr, monkeypatch):
    from gate import pair

    path, base, _ = pr
    gitrepo.git(path, "checkout", "-q", "-b", "behind", base)
    head = gitrepo.commit(path, message="a pull request branched from the base")
    gitrepo.git(path, "checkout", "-q", "main")
    tip = gitrepo.commit(path, message="main moves on")
    github.pulls[f"{REPO}#7"].update(head={"sha": head}, base={"sha": tip, "ref": "main"})
    merged = pair.judged(path, tip, head).head  # what gate --measure measured on the runner
    assert (
        judge(monkeypatch, artifact(tmp_path / "a", tip, merged, pr_head=head), env(github, path, head)) == 0
    )
    assert statuses(github, head)[report.CONTEXT][0][0] == "success"
    [comment] = github.comments[f"{REPO}#7"]
    assert f"judged merged into the base as `{merged[:12]}`" in comment["body"]


def test_the_hosted_judge_applies_a_regression_accepted_on_record_for_its_head(
    tmp_path, github, pr, monkeypatch
):
    def slow(*cells):  # the head's assembled kernel 1.4x slower in these (task, envs, threads) cells
        return lambda c: (
            1.4 if c["impl"] == "assembled" and (c["task"], c["num_envs"], c["threads"]) in cells else 1.0
        )

    path, base, head = pr
    values = env(github, path, head, number="7")
    one = slow(("g1_walk", 4096, 2))
    assert judge(monkeypatch, artifact(tmp_path / "a1", base, head, paired_effect=one), values) == 0
    assert statuses(github, head)[report.CONTEXT][-1][0] == "failure"
    github.permissions.update({"alice": "write", "rita": "read"})
    command = (
        f"/fusegate accept g1_walk assembled N=4096 threads=2 @{head[:12]} -- a new reward term, by design"
    )
    for n, who in enumerate(("rita", "alice")):
        github.comments[f"{REPO}#7"].append(
            {
                "id": 90 + n,
                "body": command,
                "user": {"login": who, "type": "User"},
                "created_at": "2026-12-07T10:00:00Z",
                "html_url": f"https://github.example/acme/robots/pull/7#issuecomment-{90 + n}",
            }
        )
    assert judge(monkeypatch, artifact(tmp_path / "a2", base, head, paired_effect=one), values) == 0
    required = statuses(github, head)[report.CONTEXT][-1]
    assert required[0] == "success" and "accepted on record" in required[1]
    body = " ".join(github.comments[f"{REPO}#7"][0]["body"].split())
    assert "@alice" in body and "a new reward term, by design" in body
    # a second regression on the same head still rejects
    two = slow(("g1_walk", 4096, 2), ("g1_walk", 4096, 1))
    assert judge(monkeypatch, artifact(tmp_path / "a3", base, head, paired_effect=two), values) == 0
    assert statuses(github, head)[report.CONTEXT][-1][0] == "failure"
