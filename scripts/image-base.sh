#!/usr/bin/env bash
# Where no image registry is reachable: build the local images the Containerfiles start from,
# from Debian packages only (docs/deploy.md).
#   localhost/authsvc-base:bookworm      Debian minbase + python3 (BASE= of the Containerfile)
#   localhost/authsvc-postgres:15        PostgreSQL 15 from Debian (deploy/images/postgres)
#   localhost/authsvc-nats:2.9           nats-server from Debian (deploy/images/nats)
# An image already present is kept; FORCE=1 rebuilds. Needs mmdebstrap, podman, runc.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
. "$repo/scripts/podman-env.sh"
SUITE=${SUITE:-bookworm}
BASE_IMAGE=localhost/authsvc-base:$SUITE

have() { [ "${FORCE:-0}" != 1 ] && podman image exists "$1"; }

if ! have "$BASE_IMAGE"; then
    tar="$PODMAN_SCRATCH/base-$SUITE.tar"
    sources=/etc/apt/sources.list.d/debian.sources
    [ -f "$sources" ] || sources=/etc/apt/sources.list
    echo "image-base: mmdebstrap $SUITE + python3 -> $BASE_IMAGE"
    mmdebstrap --quiet --variant=minbase --include=python3,python3-venv,ca-certificates \
        --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*' \
        "$SUITE" "$tar" - <"$sources"
    podman import --quiet --change 'CMD ["/bin/bash"]' "$tar" "$BASE_IMAGE" >/dev/null
    rm -f "$tar"
fi
for name in postgres:15 nats:2.9; do
    image=localhost/authsvc-$name
    if ! have "$image"; then
        echo "image-base: $image from Debian packages"
        podman build --quiet --format docker --build-arg BASE="$BASE_IMAGE" -t "$image" \
            "$repo/deploy/images/${name%%:*}" >/dev/null
    fi
done
podman images --format '{{.Repository}}:{{.Tag}} {{.Size}}' | grep '^localhost/authsvc-'
