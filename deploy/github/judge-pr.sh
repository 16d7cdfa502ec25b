#!/usr/bin/env bash
# The hosted path's privileged half, the one thing fusegate-judge.yml runs:
#
#   deploy/github/judge-pr.sh ARTIFACT_DIR
#
# Run from a checkout of the default branch (its fusegate judges; nothing of the pull request's runs). Installs
# fusegate into .venv when missing, then `fusegate judge` reads the measuring run's artifact in ARTIFACT_DIR as
# untrusted data, checks it against the run and the API, judges it with the base's policy and posts the `fusegate`
# and `fusegate/verdict` commit statuses on the head and the PR comment. From the environment: GITHUB_REPOSITORY,
# RUN_HEAD_SHA (the run's head), RUN_CONCLUSION, RUN_URL, RUN_PR (empty for a fork's pull request: the artifact's
# number, checked), FUSEGATE_GITHUB_TOKEN and FUSEGATE_GITHUB_API_URL; FUSEGATE_JUDGE: the fusegate command to
# run instead of .venv's. Exit 0: a verdict posted; 3: an error status posted; 1: GitHub refused; 64/78: usage/config.
set -uo pipefail
artifact=${1:?usage: judge-pr.sh ARTIFACT_DIR}
cd "$(git rev-parse --show-toplevel)"

if [ -n "${FUSEGATE_JUDGE:-}" ]; then
  read -r -a fusegate <<<"$FUSEGATE_JUDGE"
else
  if [ ! -x .venv/bin/fusegate ]; then
    python3.11 -m venv .venv && .venv/bin/pip install -q -e . || exit 78
  fi
  fusegate=(.venv/bin/fusegate)
fi
exec "${fusegate[@]}" judge "$artifact" --repo "${GITHUB_REPOSITORY:?}" --run-head "${RUN_HEAD_SHA:?}" \
  --run-conclusion "${RUN_CONCLUSION:-success}" --run-url "${RUN_URL:-}" --number "${RUN_PR:-}"
