#!/usr/bin/env bash
# A Debian bookworm base image from Debian's archive, for hosts that reach no image registry:
#   deploy/base-image.sh [IMAGE]     (default localhost/debian-bookworm:base; needs debootstrap and podman, root)
# Then: podman build --build-arg BASE=localhost/debian-bookworm:base -t localhost/fusegate .
set -euo pipefail
image=${1:-localhost/debian-bookworm:base}
root=$(mktemp -d /tmp/fusegate-bookworm.XXXXXX)
trap 'rm -rf "$root"' EXIT
debootstrap --variant=minbase bookworm "$root" "${DEBIAN_MIRROR:-http://deb.debian.org/debian}" >/dev/null
rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
tar -C "$root" -c . | podman import --change 'CMD ["/bin/bash"]' - "$image" >/dev/null
echo "$image"
