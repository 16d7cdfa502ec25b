"""What the bot and the hosted judge post to GitHub for a verdict, the same way from both: the required commit
status and the verdict's word beside it, then the pull request's one comment, edited in place."""

from __future__ import annotations

from gate.bot import report
from gate.bot.github import GitHub, GitHubError


def statuses(
    github: GitHub,
    repo: str,
    sha: str,
    status: report.Status,
    evaluation=None,
    *,
    target_url: str,
    installation_id: int | None = None,
) -> None:
    """``status`` as ``report.CONTEXT`` (the one branch protection requires), then ``report.word_status`` as
    ``report.VERDICT_CONTEXT``."""
    for context, posted in (
        (report.CONTEXT, status),
        (report.VERDICT_CONTEXT, report.word_status(status, evaluation)),
    ):
        github.create_status(
            repo,
            sha,
            state=posted.state,
            description=posted.description,
            target_url=target_url,
            context=context,
            installation_id=installation_id,
        )


def upsert_comment(
    github: GitHub,
    repo: str,
    number: int,
    body: str,
    *,
    comment_id: int | None = None,
    installation_id: int | None = None,
) -> int:
    """Edit the PR's fusegate comment (by ``comment_id``, else the poster's own comment with ``report.MARKER``),
    or create the first one; returns its id. A human's comment that quotes the marker is left alone."""
    kw = {"installation_id": installation_id}
    if comment_id is not None:
        try:
            github.update_comment(repo, comment_id, body, **kw)
            return comment_id
        except GitHubError as exc:
            if exc.status != 404:  # deleted by someone: look for another, or start again
                raise
    me = github.login(installation_id)
    for c in github.issue_comments(repo, number, **kw):
        if report.MARKER in (c.get("body") or "") and (c.get("user") or {}).get("login") == me:
            github.update_comment(repo, c["id"], body, **kw)
            return c["id"]
    return github.create_comment(repo, number, body, **kw)["id"]
