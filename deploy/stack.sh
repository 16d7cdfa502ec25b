#!/usr/bin/env bash
# The service stack (deploy/compose.yaml) on podman, step by step, as CI runs it (tests/deploy/test_container.py):
#   deploy/stack.sh images   # base image from Debian's archive if missing, PostgreSQL and fusegate images
#   deploy/stack.sh up       # PostgreSQL, then the migration, then two service replicas; waits for /api/health
#   deploy/stack.sh down     # stop and remove the stack and its volume
# Settings come from the environment: POSTGRES_PASSWORD, FUSEGATE_REPO_DIR (a clone of the gated repository),
# FUSEGATE_ENV_FILE (default deploy/service.env), FUSEGATE_PORT / FUSEGATE_PORT_2 (8000 / 8001), FUSEGATE_IMAGE,
# FUSEGATE_PROJECT (compose project, default fusegate), PIP_CERT (a CA bundle the image build may need).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
export CONTAINERS_CONF=${CONTAINERS_CONF:-$here/podman/containers.conf}
export FUSEGATE_IMAGE=${FUSEGATE_IMAGE:-localhost/fusegate:latest}
export FUSEGATE_POSTGRES_IMAGE=${FUSEGATE_POSTGRES_IMAGE:-localhost/fusegate-postgres:15}
project=${FUSEGATE_PROJECT:-fusegate}
compose() { podman-compose -p "$project" -f "$here/compose.yaml" "$@"; }
health() { python3 -c "import urllib.request as u; print(u.urlopen('http://127.0.0.1:$1/api/health', timeout=2).read().decode())"; }

case ${1:-} in
  images)
    base=${FUSEGATE_BASE_IMAGE:-localhost/debian-bookworm:base}
    podman image exists "$base" || "$here/base-image.sh" "$base"
    secret=()
    if [ -s "${PIP_CERT:-}" ]; then secret=(--secret "id=pip_cert,src=$PIP_CERT"); fi
    podman build -q --format docker --build-arg BASE="$base" -t "$FUSEGATE_POSTGRES_IMAGE" "$here/postgres"
    podman build -q --format docker "${secret[@]}" --build-arg BASE="$base" -t "$FUSEGATE_IMAGE" "$here/.."
    ;;
  up)
    compose up -d db
    for _ in $(seq 120); do
      podman exec "${project}_db_1" pg_isready -h 127.0.0.1 -q 2>/dev/null && break
      sleep 1
    done
    compose run --rm migrate
    compose up -d gate gate-2
    for port in "${FUSEGATE_PORT:-8000}" "${FUSEGATE_PORT_2:-8001}"; do
      for _ in $(seq 120); do
        health "$port" >/dev/null 2>&1 && break
        sleep 1
      done
      health "$port"
    done
    ;;
  down)
    compose down -v
    ;;
  *)
    echo "usage: deploy/stack.sh images|up|down" >&2
    exit 2
    ;;
esac
