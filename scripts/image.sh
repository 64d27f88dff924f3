#!/usr/bin/env bash
# `make image`: build authsvc's image (Containerfile) with podman as IMAGE (default
# localhost/authsvc:VERSION). BASE defaults to the Debian base of scripts/image-base.sh (built
# first if missing; no registry needed); BASE=python:3.11-slim uses the official image. The
# host's CA bundle (CA_BUNDLE) goes in as the build secret `ca`.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
. "$repo/scripts/podman-env.sh"
version=$(sed -n 's/^version = "\(.*\)"$/\1/p' "$repo/pyproject.toml" | head -n 1)
BASE=${BASE:-localhost/authsvc-base:bookworm}
IMAGE=${IMAGE:-localhost/authsvc:$version}
if [ "$BASE" = localhost/authsvc-base:bookworm ]; then bash "$repo/scripts/image-base.sh" >/dev/null; fi
secret=()
[ -s "$CA_BUNDLE" ] && secret=(--secret "id=ca,src=$CA_BUNDLE")
start=$SECONDS
podman build --format docker --layers "${secret[@]}" --build-arg BASE="$BASE" \
    --build-arg VERSION="$version" -t "$IMAGE" -t localhost/authsvc:latest -f "$repo/Containerfile" "$repo"
echo "image: $IMAGE built in $((SECONDS - start)) s, $(podman image inspect --format '{{.Size}}' "$IMAGE") bytes"
