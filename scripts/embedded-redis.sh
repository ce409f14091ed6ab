#!/usr/bin/env bash
# Runs a Redis server private to this checkout, in the foreground, for `make run` (scripts/serve.sh)
# and the latency bench: a Unix socket in DIR that only this user may open, nothing saved to disk.
# The platform then uses it as it uses a production Redis: broker, run events, cache.
set -euo pipefail
dir=${1:?usage: embedded-redis.sh DIR}
mkdir -p "$dir"
chmod 700 "$dir"
exec redis-server --port 0 --unixsocket "$dir/redis.sock" --unixsocketperm 700 --save "" --appendonly no \
    --dir "$dir" --loglevel warning --logfile ""
