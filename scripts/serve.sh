#!/usr/bin/env bash
# Serves the platform (ASGI, so run events stream) and a Celery worker in its own process;
# stopping this script stops both.
set -euo pipefail
host=${1:-127.0.0.1}
port=${2:-8000}
cd "$(dirname "$0")/.."
py=.venv/bin/python

$py -m celery -A ecplatform worker --loglevel INFO -Q cpu,gpu --beat \
    --schedule "${VAR_DIR:-var}/celerybeat-schedule" &
worker=$!
trap 'kill $worker 2>/dev/null; wait $worker 2>/dev/null' EXIT INT TERM

echo "EasyCompilers on http://$host:$port/ (Ctrl+C stops the web server and the worker)"
$py -m uvicorn ecplatform.asgi:application --host "$host" --port "$port" --app-dir platform
