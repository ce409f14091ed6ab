#!/usr/bin/env bash
# CI: builds the images offline (as `make image` does: a debootstrap base, wheels downloaded here,
# `docker build --network none`), starts the Compose stack with docker-compose.ci.yml (host
# networking, this machine's PostgreSQL and Redis, loopback only), logs in over HTTPS through the
# TLS proxy on 127.0.0.1, submits a run and checks its output. Stops the stack at the end.
#
# The database (CI_DATABASE_URL) and Redis DB (CI_REDIS_URL) must be the stack's own: both are
# emptied at the start.
#
#   bash scripts/ci-stack.sh
#   CI_DATABASE_URL=postgres://postgres@127.0.0.1:5432/ec_ci CI_REDIS_URL=redis://127.0.0.1:6379/15 bash scripts/ci-stack.sh
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
started=$(date +%s)
say() { echo "--- [$(( $(date +%s) - started ))s] $*"; }

py=${PYTHON:-$repo/.venv/bin/python}
[ -x "$py" ] || py=python3
pip=${PIP:-$repo/.venv/bin/pip}
base=${SANDBOX_BASE:-easycompilers-sandbox-base:bookworm}
admin_url=${CI_POSTGRES_ADMIN_URL:-postgres://postgres@127.0.0.1:5432/postgres}
db_name=${CI_DB_NAME:-easycompilers_ci}
export CI_DATABASE_URL=${CI_DATABASE_URL:-${admin_url%/*}/$db_name}
export CI_REDIS_URL=${CI_REDIS_URL:-redis://127.0.0.1:6379/15}
export CI_WEB_PORT=${CI_WEB_PORT:-18000} CI_HTTPS_PORT=${CI_HTTPS_PORT:-18443} CI_HTTP_PORT=${CI_HTTP_PORT:-18080}
work=$repo/var/ci-stack
project=easycompilers-ci
mkdir -p "$work"

say "PostgreSQL and Redis of this machine"
psql "$admin_url" -qtAc "SELECT 1" >/dev/null
# The stack's database and Redis DB are its own: emptied at the start, as a fresh machine's would be.
psql "$admin_url" -qc "DROP DATABASE IF EXISTS \"${CI_DATABASE_URL##*/}\" WITH (FORCE)"
psql "$admin_url" -qc "CREATE DATABASE \"${CI_DATABASE_URL##*/}\""
"$py" -c "import redis, sys; redis.Redis.from_url(sys.argv[1], socket_connect_timeout=3).flushdb()" "$CI_REDIS_URL"

say "base image and sandbox image (offline)"
SANDBOX_BASE=$base bash scripts/base-image.sh
SANDBOX_BASE=$base SANDBOX_IMAGE=easycompilers-sandbox:ci bash runner/image/build.sh
pyver=$(docker run --rm --network none "$base" python3 -c "import platform; print(platform.python_version())")

say "browser bundle"
if [ ! -s frontend/static/dist/learn.js ]; then
    (cd frontend && npm ci --no-audit --no-fund --loglevel=error && npm run --silent build)
fi

say "app image (offline: a context made of the tree's files, wheels downloaded here)"
context=$work/context
rm -rf "$context" && mkdir -p "$context"
git ls-files -z --cached --others --exclude-standard | grep -zv '^runner/image/wheels' \
    | tar -c --null --ignore-failed-read -T - 2>/dev/null | tar -x -C "$context"
cp -a frontend/static/dist "$context/frontend/static/dist"
mkdir -p "$context/wheels/app"
# pip reads markers off this machine's Python, not the base's: redis needs async-timeout on the
# base's 3.11.2 (python_full_version < 3.11.3), so it is named here.
"$pip" download --quiet --only-binary=:all: --python-version "$pyver" --platform manylinux_2_28_x86_64 \
    --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 --platform any \
    --find-links runner/image/wheels -d "$context/wheels/app" -r requirements.txt async-timeout \
    2> >(grep -v "is ignored: it is neither" >&2)
# This context's wheels are meant to go in.
sed -i '/^wheels$/d' "$context/.dockerignore"
DOCKER_BUILDKIT=0 docker build --network none --quiet -t easycompilers-app:ci \
    --build-arg PYTHON="$base" --build-arg NODE="$base" --build-arg BUNDLE=prebuilt --build-arg WHEELS=1 \
    "$context" >/dev/null
rm -rf "$context"

say "proxy image (Debian's caddy)"
if ! docker image inspect easycompilers-proxy:ci >/dev/null 2>&1; then
    caddy_dir=$work/caddy
    rm -rf "$caddy_dir" && mkdir -p "$caddy_dir"
    if command -v caddy >/dev/null; then
        cp "$(command -v caddy)" "$caddy_dir/caddy"
    else
        (cd "$caddy_dir" && apt-get download caddy >/dev/null 2>&1 || { apt-get update -qq && apt-get download caddy; })
        dpkg-deb -x "$caddy_dir"/caddy_*.deb "$caddy_dir/root" && cp "$caddy_dir/root/usr/bin/caddy" "$caddy_dir/caddy"
    fi
    printf 'FROM %s\nCOPY caddy /usr/bin/caddy\nRUN mkdir -p /data /config\n' "$base" \
        | DOCKER_BUILDKIT=0 docker build --network none --quiet -t easycompilers-proxy:ci -f - "$caddy_dir" >/dev/null
fi

say "stack up"
secret=$("$py" -c 'import secrets; print(secrets.token_urlsafe(50))')
{
    grep -vE '^(SECRET_KEY|SITE_ADDRESS|POSTGRES_PASSWORD|DOCKER_GID|APP_IMAGE|SANDBOX_IMAGE)=' .env.example
    echo "SECRET_KEY=$secret"
    echo "SITE_ADDRESS=127.0.0.1"
    echo "POSTGRES_PASSWORD=unused-in-ci"
    echo "DOCKER_GID=$(stat -c %g /var/run/docker.sock)"
    echo "APP_IMAGE=easycompilers-app:ci"
    echo "SANDBOX_IMAGE=easycompilers-sandbox:ci"
    echo "CI_DATABASE_URL=$CI_DATABASE_URL"
    echo "CI_REDIS_URL=$CI_REDIS_URL"
    echo "CI_WEB_PORT=$CI_WEB_PORT"
    echo "CI_HTTPS_PORT=$CI_HTTPS_PORT"
    echo "CI_HTTP_PORT=$CI_HTTP_PORT"
} > "$work/ci.env"
"$py" scripts/compose_merge.py docker-compose.yml docker-compose.ci.yml > "$work/compose.yml"
compose() { docker-compose -p "$project" --project-directory "$repo" --env-file "$work/ci.env" -f "$work/compose.yml" "$@"; }
down() {
    status=$?
    if [ "$status" != 0 ]; then
        compose logs --no-color --tail 80 >&2 || true
    fi
    compose down -v --remove-orphans >/dev/null 2>&1 || true
    say "done (exit $status)"
}
trap down EXIT
compose up -d --no-build

web=$(compose ps -q web)
for _ in $(seq 1 90); do
    health=$(docker inspect -f '{{.State.Health.Status}}' "$web" 2>/dev/null || echo gone)
    [ "$health" = healthy ] && break
    [ "$health" = gone ] && { echo "web container is gone" >&2; exit 1; }
    sleep 2
done
[ "$health" = healthy ] || { echo "web never became healthy ($health)" >&2; exit 1; }
say "web is healthy; a learner and an exercise"
compose exec -T web python3 manage.py shell -c '
from accounts.services import user_create
from courses.models import Chapter, Course, Exercise
user_create(username="ci-learner", password="ci-password-1")
course = Course.objects.create(slug="ci", title="CI", published=True)
chapter = Chapter.objects.create(course=course, number=1, slug="one", title="One", published=True)
print(Exercise.objects.create(chapter=chapter, slug="hello", title="Hello", time_limit_s=60).id)
' > "$work/exercise"
exercise=$(tail -1 "$work/exercise")

say "over HTTPS through the proxy: log in, run, read the output"
proxy=$(compose ps -q proxy)
cacert=$work/caddy-root.crt
for _ in $(seq 1 30); do
    docker cp "$proxy:/data/caddy/pki/authorities/local/root.crt" "$cacert" 2>/dev/null && break
    sleep 1
done
url=https://127.0.0.1:$CI_HTTPS_PORT
curl_() { curl --silent --show-error --fail-with-body --cacert "$cacert" "$@"; }
token=$(curl_ -H 'Content-Type: application/json' -d '{"username": "ci-learner", "password": "ci-password-1"}' \
    "$url/api/auth/token/" | "$py" -c 'import json, sys; print(json.load(sys.stdin)["token"])')
payload=$("$py" -c 'import json, sys; print(json.dumps({"exercise": int(sys.argv[1]), "code": "import torch\nprint(\"sum\", torch.arange(4).sum().item())"}))' "$exercise")
run=$(curl_ -H "Authorization: Token $token" -H 'Content-Type: application/json' \
    -d "$payload" "$url/api/runs/" \
    | "$py" -c 'import json, sys; print(json.load(sys.stdin)["id"])')
for _ in $(seq 1 120); do
    body=$(curl_ -H "Authorization: Token $token" "$url/api/runs/$run/")
    status=$(echo "$body" | "$py" -c 'import json, sys; print(json.load(sys.stdin)["status"])')
    case $status in queued|running) sleep 1 ;; *) break ;; esac
done
echo "$body" | "$py" -c '
import json, sys
run = json.load(sys.stdin)
print("run", run["id"], run["status"], "stdout", repr(run["stdout"]), run.get("reason") or "")
sys.exit(0 if run["status"] == "succeeded" and run["stdout"] == "sum 6\n" else 1)
'
# Plain HTTP does not reach the app from outside loopback, and the proxy is the only way in over TLS.
say "stack passed"
