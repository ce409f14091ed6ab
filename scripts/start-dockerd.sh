#!/usr/bin/env bash
# Starts a Docker engine if none answers. --bridge=none: containers get no network at all,
# which is what a sandbox needs (and nothing here can reach the internet anyway).
set -euo pipefail
if docker info >/dev/null 2>&1; then
    exit 0
fi
mkdir -p /var/log
nohup dockerd --bridge=none --iptables=false --ip-masq=false >/var/log/dockerd.log 2>&1 &
for _ in $(seq 1 60); do
    docker info >/dev/null 2>&1 && exit 0
    sleep 0.5
done
echo "dockerd did not start; see /var/log/dockerd.log" >&2
tail -20 /var/log/dockerd.log >&2
exit 1
