#!/usr/bin/env bash
# One pull request measured on one machine, the way the hosted workflow (fusegate-hosted.yml) runs it:
#
#   deploy/github/gate-pr.sh BASE HEAD
#
# Run from a checkout of BASE (its fusegate measures and judges: meter, policy and evaluation are the base's; the
# head contributes only its kernels/). Installs fusegate into .venv and valgrind when missing (as root, Debian's
# package), measures the base and the head's subject with the base's meter in lockstep (fusegate gate --measure,
# the quick profile, SQLite in .fusegate/store.db; a base whose results are there already is not measured again),
# appends the verdict's summary as markdown to $GITHUB_STEP_SUMMARY when set, and exits with the verdict's code:
# 0 approve, 1 reject, 2 inconclusive, 3 error (64/78: usage/config). With BASE = HEAD it measures that one
# commit (fusegate-main.yml, on a push to the default branch). Its --max-minutes is $FUSEGATE_MAX_MINUTES, default
# 25 (not the gate's 15): a hosted runner measures from empty caches, compiling every kernel twice.
set -uo pipefail
base=${1:?usage: gate-pr.sh BASE HEAD}
head=${2:?usage: gate-pr.sh BASE HEAD}
cd "$(git rev-parse --show-toplevel)"

if [ ! -x .venv/bin/fusegate ]; then
  python3.11 -m venv .venv && .venv/bin/pip install -q -e . || exit 78
fi
if ! command -v valgrind >/dev/null 2>&1; then
  sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
  $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq valgrind >/dev/null || exit 78
fi
git cat-file -e "$head^{commit}" 2>/dev/null || git fetch --quiet origin "$head" || exit 64
.venv/bin/asv machine --yes >/dev/null

mkdir -p .fusegate
summary=${GITHUB_STEP_SUMMARY:-.fusegate/summary.md}
.venv/bin/fusegate gate --base "$base" --head "$head" --measure --db "sqlite:///$PWD/.fusegate/store.db" \
  --max-minutes "${FUSEGATE_MAX_MINUTES:-25}" --summary "$summary"
