#!/usr/bin/env bash
# A Debian bookworm base image made here with debootstrap and `docker import`, for builds that
# cannot pull (python3, python3-venv, CA certificates). Does nothing when the image exists.
set -euo pipefail
base=${SANDBOX_BASE:-easycompilers-sandbox-base:bookworm}
if docker image inspect "$base" >/dev/null 2>&1; then
    exit 0
fi
echo "--- base image $base (debootstrap bookworm)"
mirror=$(grep -rhoE '^(URIs:|deb) *https?://[^ ]+/debian/?( |$)' /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null \
    | grep -oE 'https?://[^ ]+' | head -1 || true)
mirror=${DEBIAN_MIRROR:-${mirror:-http://deb.debian.org/debian}}
root=$(mktemp -d /var/tmp/sandbox-base.XXXXXX)
trap 'rm -rf "$root"' EXIT
debootstrap --variant=minbase --include=python3,python3-venv,ca-certificates bookworm "$root" "$mirror" >/dev/null
rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
tar -C "$root" -c . | docker import --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' - "$base" >/dev/null
