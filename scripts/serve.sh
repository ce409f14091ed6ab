#!/usr/bin/env bash
# Serves the platform (ASGI, so run events stream) and a Celery worker in its own process, with a
# Redis of its own unless REDIS_URL names one; stopping this script stops them all.
#
# Why an embedded Redis (where redis-server is installed; scripts/prereqs.sh installs it): with it a
# run's message reaches the worker, and its output the browser, as soon as they exist, as in
# production. Without it the file-system broker polls for messages and the event stream polls the
# Run row, and each run waits for both (bench/run_latency.py --embedded measures every option).
set -euo pipefail
host=${1:-127.0.0.1}
port=${2:-8000}
cd "$(dirname "$0")/.."
py=.venv/bin/python
var=$(realpath -m "${VAR_DIR:-var}")
mkdir -p "$var"
children=()
trap 'kill "${children[@]}" 2>/dev/null; wait 2>/dev/null' EXIT
trap 'exit 130' INT TERM

if [ -z "${REDIS_URL:-}" ] && command -v redis-server >/dev/null; then
    redis_dir=$var/redis
    # A Unix socket's path has room for 107 bytes.
    if ((${#redis_dir} > 90)); then
        redis_dir=$(mktemp -d "${TMPDIR:-/tmp}/easycompilers-redis.XXXXXX")
    fi
    bash scripts/embedded-redis.sh "$redis_dir" >>"$var/redis.log" 2>&1 &
    children+=($!)
    for _ in $(seq 1 50); do
        redis-cli -s "$redis_dir/redis.sock" ping >/dev/null 2>&1 && break
        sleep 0.1
    done
    if ! redis-cli -s "$redis_dir/redis.sock" ping >/dev/null 2>&1; then
        echo "the embedded Redis did not start; see $var/redis.log" >&2
        exit 1
    fi
    export REDIS_URL="unix://$redis_dir/redis.sock"
fi

# One worker: it has no other to gossip or synchronise with at start. Its log also goes to a file,
# so this script knows when it is ready.
: >"$var/worker.log"
$py -m celery -A ecplatform worker --loglevel INFO -Q cpu,gpu --without-gossip --without-mingle --beat \
    --schedule "$var/celerybeat-schedule" > >(tee -a "$var/worker.log") 2>&1 &
children+=($!)

$py -m uvicorn ecplatform.asgi:application --host "$host" --port "$port" --app-dir platform &
children+=($!)

# The first screen, once both answer: where to go, how to log in, what runs on what, and what runs
# degraded.
for _ in $(seq 1 600); do
    grep -q " ready\." "$var/worker.log" && (exec 3<>"/dev/tcp/$host/$port") 2>/dev/null && break
    sleep 0.2
done
$py -m frontend.status "http://$host:$port/"
wait -n "${children[@]}"
