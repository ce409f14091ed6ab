#!/usr/bin/env bash
# Builds the sandbox image on this machine without pulling anything (`make image`):
#   1. a base image from `debootstrap --variant=minbase bookworm` + `docker import`, once;
#   2. wheels for the base's Python with the project's pip (`pip download`), into wheels/
#      (VARIANT=gpu: wheels-gpu/, the CUDA build of torch);
#   3. `docker build --network none` of runner/image/Dockerfile with WHEELS=1, from a context made of
#      the few files the image needs (the repository's .dockerignore keeps wheel folders out of
#      ordinary builds, which take wheels from the index).
# Quick when the image is current: the image carries a label with a hash of its inputs.
# Elsewhere: docker build -f runner/image/Dockerfile . (from the index, FROM python:3.11-slim-bookworm).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
variant=${VARIANT:-cpu}
if [ "$variant" = gpu ]; then
    image=${SANDBOX_IMAGE:-easycompilers-sandbox-gpu:latest}
    requirements=requirements-gpu.txt wheels=wheels-gpu
    # The CUDA build is PyPI's own torch (requirements-gpu.txt); TORCH_INDEX_URL may add an index.
    extra=(${TORCH_INDEX_URL:+--extra-index-url "$TORCH_INDEX_URL"})
else
    image=${SANDBOX_IMAGE:-easycompilers-sandbox:latest}
    requirements=requirements.txt wheels=wheels
    extra=()
fi
base=${SANDBOX_BASE:-easycompilers-sandbox-base:bookworm}
pip=${PIP:-$repo/.venv/bin/pip}

inputs=$(cat "$here/Dockerfile" "$repo"/sandbox/harness/*.py "$here/$requirements" | sha256sum | cut -c1-16)
if [ "$(docker image inspect -f '{{ index .Config.Labels "easycompilers.inputs" }}' "$image" 2>/dev/null)" = "$inputs" ]; then
    echo "sandbox image $image is current ($inputs)"
    exit 0
fi

SANDBOX_BASE=$base bash "$repo/scripts/base-image.sh"

pyver=$(docker run --rm --network none "$base" python3 -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')
echo "--- $variant wheels for Python $pyver"
mkdir -p "$here/$wheels"
# Every manylinux tag the wheels use (the NVIDIA wheels span manylinux1 to 2_28): pip matches
# --platform literally.
platforms=()
for tag in 1 2010 2014 _2_5 _2_12 _2_17 _2_18 _2_24 _2_25 _2_27 _2_28; do
    platforms+=(--platform "manylinux${tag}_x86_64")
done
"$pip" download --quiet --only-binary=:all: \
    --python-version "$pyver" "${platforms[@]}" --platform any ${extra[@]+"${extra[@]}"} \
    -d "$here/$wheels" -r "$here/$requirements" 2> >(grep -v "is ignored: it is neither" >&2)

# The context: the Dockerfile's inputs in their places in the tree, wheels as hard links.
context=$(mktemp -d "$repo/var/image-context.XXXXXX" 2>/dev/null || { mkdir -p "$repo/var" && mktemp -d "$repo/var/image-context.XXXXXX"; })
trap 'rm -rf "$context"' EXIT
mkdir -p "$context/runner/image" "$context/sandbox/harness"
cp "$here/Dockerfile" "$here"/requirements*.txt "$context/runner/image/"
cp "$repo"/sandbox/harness/*.py "$context/sandbox/harness/"
cp -al "$here/$wheels" "$context/runner/image/$wheels" 2>/dev/null || cp -a "$here/$wheels" "$context/runner/image/$wheels"

echo "--- docker build $image"
DOCKER_BUILDKIT=0 docker build --network none --quiet -f "$context/runner/image/Dockerfile" \
    --build-arg BASE="$base" --build-arg VARIANT="$variant" --build-arg WHEELS=1 \
    --label "easycompilers.inputs=$inputs" -t "$image" "$context" >/dev/null
echo "sandbox image $image built ($inputs)"
