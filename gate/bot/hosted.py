"""The hosted path's judge: a measuring run's artifact in, the commit statuses and the PR comment out.

The measuring job (``deploy/github/fusegate-hosted.yml``) ran the head's code, and that code could have written
anything the job uploaded. So the artifact is untrusted input here: read as data (one small JSON, and asv results
validated as the service validates an upload), never imported or executed. It must name the head the
``workflow_run`` event names, a pull request of this repository whose head that is now (asked of the API: a fork's
event lists no pull request, so the number comes from the artifact and is checked), and a base on that pull
request's base branch. Its results go into a fresh store; this checkout's fusegate evaluates them with the base's
policy and posts ``report.CONTEXT``, ``report.VERDICT_CONTEXT`` and the one comment (``gate.bot.post``), as the
service's bot does. A run that failed, uploaded nothing or uploaded something malformed gets an ``error`` status
that says why.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from gate import acceptance, git
from gate import pair as pairs
from gate import policy as policies
from gate.bot import post, report
from gate.bot.github import GitHub
from gate.domain.evaluations import EvaluationRecord
from gate.services import results, verdicts

FORMAT = 1
PR_FILE = (
    ".fusegate/pr.json"  # written by the measuring workflow: {"format", "number", "base_sha", "head_sha"}
)
RESULTS = (".asv/results", ".fusegate/worktrees/*/.asv/results")  # the base's tree, the head's worktree
MAX_BYTES = 512 * 2**20  # the whole artifact; a quick profile's results are a few MB
_SHA = re.compile(r"[0-9a-f]{40}")


class ArtifactError(ValueError):
    """The artifact cannot be judged: what is wrong, with which value."""


@dataclass(frozen=True, kw_only=True)
class Run:
    """What the ``workflow_run`` event says of the measuring run (GitHub wrote it: trusted)."""

    repo: str  # owner/name
    head_sha: str
    conclusion: str  # success | failure | cancelled | timed_out | ...
    url: str  # the run's page: its log and step summary
    number: int | None = None  # workflow_run.pull_requests[0].number; None for a fork's pull request


@dataclass(frozen=True, kw_only=True)
class Artifact:
    number: int
    base_sha: str
    head_sha: str
    results: tuple[Path, ...]


@dataclass(frozen=True, kw_only=True)
class Judged:
    status: report.Status  # the required one, as posted
    evaluation: EvaluationRecord | None
    number: int | None  # the pull request commented on (None: no comment)


def _sha(data: dict, key: str) -> str:
    value = data.get(key)
    if not isinstance(value, str) or not _SHA.fullmatch(value):
        raise ArtifactError(
            f"{PR_FILE}: {key} must be a full lower-case commit SHA (40 hex digits), got {value!r}"
        )
    return value


def read_pr(root: Path) -> dict:
    """``PR_FILE`` of the artifact at ``root``, its shape checked: the format, a PR number, two full SHAs."""
    path = root / PR_FILE
    if path.is_symlink() or not path.is_file():
        raise ArtifactError(
            f"{PR_FILE} is missing from the artifact: the measuring run wrote no pull request"
        )
    if path.stat().st_size > 4096:
        raise ArtifactError(f"{PR_FILE} is {path.stat().st_size} bytes; it holds four fields")
    try:
        data = json.loads(path.read_text())
    except (ValueError, UnicodeDecodeError) as exc:
        raise ArtifactError(f"{PR_FILE} is not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ArtifactError(f"{PR_FILE} must be a JSON object, got {type(data).__name__}")
    unknown = sorted(set(data) - {"format", "number", "base_sha", "head_sha"})
    if unknown:
        raise ArtifactError(f"{PR_FILE}: unknown fields {unknown}")
    if data.get("format") != FORMAT:
        raise ArtifactError(f"{PR_FILE}: format must be {FORMAT}, got {data.get('format')!r}")
    number = data.get("number")
    if isinstance(number, bool) or not isinstance(number, int) or number < 1:
        raise ArtifactError(
            f"{PR_FILE}: number must be a pull request number (a positive integer), got {number!r}"
        )
    return {"number": number, "base_sha": _sha(data, "base_sha"), "head_sha": _sha(data, "head_sha")}


def read_artifact(root: Path, run: Run) -> Artifact:
    """The artifact at ``root``, checked against the run: no links, within ``MAX_BYTES``, ``PR_FILE`` naming the
    run's head (and its pull request, when the event names one), and asv results where the job writes them."""
    if not root.is_dir() or not any(root.iterdir()):
        raise ArtifactError(
            f"the measuring run uploaded no artifact (it ended {run.conclusion}): nothing to judge; see {run.url}"
        )
    total = 0
    for path in root.rglob("*"):
        if path.is_symlink():
            raise ArtifactError(f"the artifact holds a link, {path.relative_to(root)}: refused")
        if path.is_file():
            total += path.stat().st_size
    if total > MAX_BYTES:
        raise ArtifactError(f"the artifact holds {total / 2**20:.0f} MiB, more than {MAX_BYTES // 2**20} MiB")
    pr = read_pr(root)
    if pr["head_sha"] != run.head_sha:
        raise ArtifactError(
            f"{PR_FILE} names head {pr['head_sha'][:12]}, but the measuring run measured {run.head_sha[:12]}: "
            "the artifact is not this run's head"
        )
    if run.number is not None and pr["number"] != run.number:
        raise ArtifactError(f"{PR_FILE} names pull request #{pr['number']}, the run's event #{run.number}")
    found = tuple(sorted(p for pattern in RESULTS for p in root.glob(pattern) if p.is_dir()))
    if not found:
        raise ArtifactError(
            f"the artifact holds no asv results ({' or '.join(RESULTS)}): the measuring run measured nothing; "
            f"see {run.url}"
        )
    return Artifact(number=pr["number"], base_sha=pr["base_sha"], head_sha=pr["head_sha"], results=found)


def _checked_pull(github: GitHub, run: Run, number: int, repo: Path, base_sha: str | None) -> dict:
    """The pull request from the API, refused unless its head is the run's head and ``base_sha`` is on its base
    branch (at or before the API's base)."""
    pull = github.pull(run.repo, number)
    head = (pull.get("head") or {}).get("sha")
    if head != run.head_sha:
        raise ArtifactError(
            f"pull request #{number}'s head is {str(head)[:12]}, not the measured {run.head_sha[:12]}: "
            "not judged (a newer push is judged by its own run)"
        )
    if base_sha is not None:
        tip = (pull.get("base") or {}).get("sha", "")
        missing = git.fetch_missing(repo, [base_sha, tip, run.head_sha])
        if missing:
            raise ArtifactError(f"commits {', '.join(s[:12] for s in missing)} cannot be fetched into {repo}")
        if not git.is_ancestor(repo, base_sha, tip):
            raise ArtifactError(
                f"base {base_sha[:12]} is not on pull request #{number}'s base branch "
                f"({(pull.get('base') or {}).get('ref')} at {tip[:12]}): refused"
            )
    return pull


def ask(base_sha: str, head_sha: str) -> str:
    """How an inconclusive hosted check gets its rounds (the comment says it)."""
    return (
        "re-run the measuring workflow's job with more minutes (the repository variable `FUSEGATE_MAX_MINUTES`, "
        f"25 unless set), or on a machine of your own: `fusegate gate --base {base_sha[:12]} --head "
        f"{head_sha[:12]} --measure --max-minutes 40`"
    )


def judge(root: Path, run: Run, *, github: GitHub, repo: Path, url: str) -> Judged:
    """Read, check, ingest, evaluate and post (module docstring). ``repo``: this checkout (git reads the policy
    and the lineage from it); ``url``: a fresh store."""
    number = run.number
    try:
        pr = read_pr(root) if root.is_dir() else None
    except ArtifactError:
        pr = None
    if number is None and pr is not None and pr["head_sha"] == run.head_sha:
        number = pr["number"]  # a fork's run: the artifact's number, trusted once the API confirms it below
    try:
        if run.conclusion != "success":
            raise ArtifactError(f"the measuring run ended {run.conclusion}: nothing judged; see {run.url}")
        artifact = read_artifact(root, run)
        pull = _checked_pull(github, run, artifact.number, repo, artifact.base_sha)
        policy, source = policies.read_from_base(repo, artifact.base_sha)
        for found in artifact.results:
            results.arrived_from_directory(url, repo=repo, results=found)
        # a head behind its base is judged merged into it (gate.pair)
        judged = pairs.judged(repo, artifact.base_sha, artifact.head_sha)
        evaluation = verdicts.evaluate(url, repo=repo, base_sha=artifact.base_sha, head_sha=judged.head)
        handled = _accepted(github, run.repo, artifact, evaluation.comparisons)
        if handled.acceptances:
            evaluation = verdicts.evaluate(
                url,
                repo=repo,
                base_sha=artifact.base_sha,
                head_sha=judged.head,
                acceptances=handled.acceptances,
            )
    except ValueError as exc:  # ArtifactError, IngestError, a bundle's validation, PolicyError: bad input
        return _refused(github, run, number, repo, str(exc), base_sha=pr["base_sha"] if pr else "")
    now = datetime.now(UTC)
    status = report.verdict_status(evaluation, policy, now=now, deadline=now, final=True)
    post.statuses(github, run.repo, run.head_sha, status, evaluation, target_url=run.url)
    body = report.comment(
        status=status,
        base_sha=artifact.base_sha,
        head_sha=artifact.head_sha,
        base_ref=(pull.get("base") or {}).get("ref") or "base",
        link=run.url,
        evaluation=evaluation,
        policy_source=source,
        policy_edited=policies.edits_policy(repo, artifact.base_sha, artifact.head_sha),
        ask=ask(artifact.base_sha, artifact.head_sha),
        judged_sha=judged.head,
        commands=_answered(handled.answers),
    )
    post.upsert_comment(github, run.repo, artifact.number, body)
    return Judged(status=status, evaluation=evaluation, number=artifact.number)


def _accepted(github: GitHub, repo: str, artifact: Artifact, rows):
    """The regressions accepted on record for this head in the pull request's comments (``/fusegate accept ...
    @<head>`` by a user with write access: ``gate.acceptance``), and the answers to their commands."""
    comments = list(github.issue_comments(repo, artifact.number))
    return acceptance.from_comments(
        comments,
        repo=repo,
        number=artifact.number,
        head_sha=artifact.head_sha,
        rows=rows,
        permission=lambda login: github.permission(repo, login),
        ignore=("github-actions[bot]",),
    )


def _answered(answers) -> list[report.Answered]:
    """The answers to the comments' commands, grouped by comment as the PR comment shows them."""
    by_comment: dict[tuple[str, str], list[dict]] = {}
    for a in answers:
        by_comment.setdefault((a.login, a.url), []).append({"command": a.command, "text": a.text, "ok": a.ok})
    return [
        report.Answered(login=who, url=at, answers=tuple(found)) for (who, at), found in by_comment.items()
    ]


def _refused(github: GitHub, run: Run, number: int | None, repo: Path, why: str, *, base_sha: str) -> Judged:
    """An ``error`` status on the run's head saying ``why``, and the comment when the pull request is known and
    its head is the run's (a number the API does not confirm gets no comment)."""
    status = report.error_status(why)
    post.statuses(github, run.repo, run.head_sha, status, target_url=run.url)
    if number is not None:
        try:
            _checked_pull(github, run, number, repo, None)
        except ArtifactError:
            return Judged(status=status, evaluation=None, number=None)
        body = report.comment(
            status=status,
            base_sha=base_sha or "unknown",
            head_sha=run.head_sha,
            base_ref="base",
            link=run.url,
        )
        post.upsert_comment(github, run.repo, number, body)
    return Judged(status=status, evaluation=None, number=number)
