#!/usr/bin/env bash
# Builds the sandbox image (easycompilers-sandbox:latest) on this machine without pulling:
#   1. a base image from `debootstrap --variant=minbase bookworm` + `docker import`, once;
#   2. wheels for the base's Python with the project's pip (`pip download`), into wheels/;
#   3. `docker build --network none` with that base and those wheels.
# Quick when the image is current: the image carries a label with a hash of its inputs.
# Production: docker build --build-arg BASE=python:3.11-slim-bookworm (the Dockerfile's default).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
image=${SANDBOX_IMAGE:-easycompilers-sandbox:latest}
base=${SANDBOX_BASE:-easycompilers-sandbox-base:bookworm}
pip=${PIP:-$repo/.venv/bin/pip}

cp "$repo/runner/sandbox/harness.py" "$here/harness.py"
inputs=$(cat "$here/Dockerfile" "$here/harness.py" "$here/requirements.txt" | sha256sum | cut -c1-16)
if [ "$(docker image inspect -f '{{ index .Config.Labels "easycompilers.inputs" }}' "$image" 2>/dev/null)" = "$inputs" ]; then
    echo "sandbox image $image is current ($inputs)"
    exit 0
fi

if ! docker image inspect "$base" >/dev/null 2>&1; then
    echo "--- base image $base (debootstrap bookworm)"
    mirror=$(grep -rhoE '^(URIs:|deb) *https?://[^ ]+/debian/?( |$)' /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null \
        | grep -oE 'https?://[^ ]+' | head -1 || true)
    mirror=${DEBIAN_MIRROR:-${mirror:-http://deb.debian.org/debian}}
    root=$(mktemp -d /var/tmp/sandbox-base.XXXXXX)
    trap 'rm -rf "$root"' EXIT
    debootstrap --variant=minbase --include=python3,python3-venv,ca-certificates bookworm "$root" "$mirror" >/dev/null
    rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
    tar -C "$root" -c . | docker import --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' - "$base" >/dev/null
    rm -rf "$root"
    trap - EXIT
fi

pyver=$(docker run --rm --network none "$base" python3 -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')
echo "--- wheels for Python $pyver"
mkdir -p "$here/wheels"
"$pip" download --quiet --only-binary=:all: --python-version "$pyver" --platform manylinux_2_28_x86_64 \
    --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 --platform any \
    -d "$here/wheels" -r "$here/requirements.txt" 2> >(grep -v "is ignored: it is neither" >&2)

echo "--- docker build $image"
DOCKER_BUILDKIT=0 docker build --network none --quiet --build-arg BASE="$base" --label "easycompilers.inputs=$inputs" \
    -t "$image" "$here" >/dev/null
echo "sandbox image $image built ($inputs)"
