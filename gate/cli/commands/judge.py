"""``fusegate judge``: the hosted path's privileged half. Reads the artifact a measuring run uploaded (untrusted:
data only, checked against the run and the API), judges it with this checkout's fusegate and the base's policy,
and posts the ``fusegate`` and ``fusegate/verdict`` commit statuses and the PR comment. GitHub auth:
``FUSEGATE_GITHUB_TOKEN`` (in Actions, the workflow's token), ``FUSEGATE_GITHUB_API_URL``. Exit 0: a verdict was
posted; 3: an error status was (the artifact was missing, malformed or not the run's)."""

from __future__ import annotations

import argparse
import re
import tempfile
from pathlib import Path

from gate.cli import exits, output

NAME = ("judge",)
HELP = "judge a measuring run's artifact and post the commit statuses and the PR comment (the hosted judge)"
ACTIONS_LOGIN = "github-actions[bot]"  # who an Actions token comments as


def _repo(text: str) -> str:
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9_.-]+", text):
        raise argparse.ArgumentTypeError(f"{text!r} is not OWNER/NAME")
    return text


def _sha(text: str) -> str:
    if not re.fullmatch(r"[0-9a-f]{40}", text):
        raise argparse.ArgumentTypeError(f"{text!r} is not a full commit SHA (40 lower-case hex digits)")
    return text


def _number(text: str) -> int | None:
    if text == "":
        return None  # the event listed no pull request (a fork's): the artifact's number, checked
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a pull request number")
    return int(text)


def arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("artifact", help="the directory the measuring run's artifact was downloaded to")
    p.add_argument("--repo", required=True, type=_repo, help="OWNER/NAME ($GITHUB_REPOSITORY)")
    p.add_argument(
        "--run-head", required=True, type=_sha, help="the head SHA the measuring run measured (the event's)"
    )
    p.add_argument(
        "--run-conclusion",
        default="success",
        help="the measuring run's conclusion (the event's; default success)",
    )
    p.add_argument(
        "--run-url", default="", help="the measuring run's page: the statuses and the comment link it"
    )
    p.add_argument(
        "--number",
        type=_number,
        default=None,
        help="the pull request the event names (empty for a fork's: the artifact's, checked with the API)",
    )
    p.add_argument(
        "--login",
        default=ACTIONS_LOGIN,
        help=f"who the token comments as, to find the comment to edit (default {ACTIONS_LOGIN})",
    )
    p.add_argument(
        "--db",
        metavar="URL",
        help="the store to judge in (default: a fresh SQLite store, removed afterwards)",
    )


def run(args: argparse.Namespace) -> int:
    from gate.bot import hosted
    from gate.bot.github import GitHub, GitHubError, Retry, TokenAuth
    from gate.cli.options import repo_path, settings
    from gate.settings import SettingsError
    from gate.store import db

    config = settings()
    if config.github_token is None or not config.github_token.get_secret_value().strip():
        raise SettingsError(
            "fusegate judge posts to GitHub: set FUSEGATE_GITHUB_TOKEN (in Actions: the job's token)"
        )
    github = GitHub(
        base_url=config.github_api_url,
        auth=TokenAuth(config.github_token.get_secret_value()),
        retry=Retry(attempts=config.github_attempts, backoff=config.github_backoff_s),
        login=args.login,
    )
    run_ = hosted.Run(
        repo=args.repo,
        head_sha=args.run_head,
        conclusion=args.run_conclusion,
        url=args.run_url,
        number=args.number,
    )
    with tempfile.TemporaryDirectory(prefix="fusegate-judge-") as scratch:
        url = args.db or f"sqlite:///{Path(scratch) / 'judge.db'}"  # a fresh store unless told
        db.upgrade(url)
        try:
            judged = hosted.judge(Path(args.artifact), run_, github=github, repo=repo_path(), url=url)
        except GitHubError as exc:  # GitHub refused or kept failing: nothing more can be posted
            output.console(stderr=True).print(
                f"fusegate: error: GitHub: {exc}", soft_wrap=True, highlight=False
            )
            return exits.REJECT
        finally:
            github.close()
    posted = f"{judged.status.state}: {judged.status.description}"
    where = f"#{judged.number}" if judged.number is not None else "no pull request confirmed: no comment"
    output.console().print(
        f"{args.repo}@{args.run_head[:12]}: {posted} ({where})", soft_wrap=True, highlight=False
    )
    return exits.ERROR if judged.evaluation is None else exits.APPROVE
