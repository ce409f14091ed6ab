#!/usr/bin/env bash
# The system packages EasyCompilers needs, checked before anything else is set up; what is missing is
# installed with apt where this user may (root, or sudo without a password), otherwise the exact
# command to run is printed and the script fails, so `make` stops before a virtualenv or a database
# exists. Checking takes a few tool lookups, so it runs before every `make run`, `make test` and CI.
#
#   scripts/prereqs.sh run    what `make run` needs: a Python venv, bubblewrap (the local sandbox),
#                             node and npm (the browser bundle), redis-server (the embedded broker)
#   scripts/prereqs.sh test   that and what the tests use: Chromium, the PostgreSQL client, a Docker
#                             engine and Compose, debootstrap (the sandbox image's base)
set -euo pipefail
mode=${1:-run}
python=${PYTHON:-python3}
case $mode in run | test) ;; *)
    echo "usage: $0 run|test" >&2
    exit 2
    ;;
esac

# The local backend's bubblewrap flags (sandbox/local.py); bubblewrap 0.8.0 (Debian 12) has all.
bwrap_flags=(--ro-bind-fd --as-pid-1 --size --mqueue --disable-userns)
# esbuild 0.28 needs node 18 (Debian 12 ships 18.19); npm ci reads lock files of npm 7 and later.
node_major=18
npm_major=7

missing=()   # Debian packages to install
why=()       # one line each: what is missing or too old

need() { missing+=("$1"); why+=("$1: $2"); }

major() { local v=${1#v}; echo "${v%%.*}"; }

check() {
    if ! command -v "$python" >/dev/null; then
        need python3 "no $python"
    elif ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
        echo "$python is $("$python" -V 2>&1); EasyCompilers needs Python 3.11 or later (Debian 12 has it)." >&2
        exit 1
    elif ! "$python" -c 'import ensurepip, venv' 2>/dev/null; then
        need python3-venv "$python cannot make a virtualenv (no ensurepip)"
    fi
    if ! command -v bwrap >/dev/null; then
        need bubblewrap "no bwrap: learners' code cannot run in the local sandbox"
    else
        local help flag
        help=$(bwrap --help 2>&1 || true)
        for flag in "${bwrap_flags[@]}"; do
            if [[ $help != *"$flag "* ]]; then
                need bubblewrap "bwrap $(bwrap --version 2>&1 | head -1) lacks $flag: 0.8.0 or later is needed"
                break
            fi
        done
    fi
    if ! command -v node >/dev/null; then
        need nodejs "no node: the browser bundle cannot be built"
    elif (($(major "$(node --version)") < node_major)); then
        need nodejs "node $(node --version) is older than $node_major"
    fi
    if ! command -v npm >/dev/null; then
        need npm "no npm: the browser bundle's packages cannot be installed"
    elif (($(major "$(npm --version)") < npm_major)); then
        need npm "npm $(npm --version) is older than $npm_major"
    fi
    command -v redis-server >/dev/null || need redis-server "no redis-server: runs would wait on a polling broker"
    if [[ $mode == test ]]; then
        command -v chromium >/dev/null || need chromium "no chromium: the browser tests cannot run"
        command -v psql >/dev/null || need postgresql-client "no psql: the tests cannot reach PostgreSQL"
        command -v dockerd >/dev/null || need docker.io "no dockerd: the docker backend's tests cannot run"
        command -v docker-compose >/dev/null || need docker-compose "no docker-compose: the Compose file is not checked"
        command -v debootstrap >/dev/null || need debootstrap "no debootstrap: the sandbox image cannot be built"
    fi
    return 0
}

check
if ((${#missing[@]} == 0)); then
    exit 0
fi

echo "Missing system packages:" >&2
printf '  %s\n' "${why[@]}" >&2
packages=$(printf '%s\n' "${missing[@]}" | sort -u | tr '\n' ' ')
packages=${packages% }

if ! command -v apt-get >/dev/null; then
    echo "No apt-get here: install the equivalents of these Debian packages, then run this again: $packages" >&2
    exit 1
fi
if (($(id -u) == 0)); then
    apt=(apt-get)
elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
    apt=(sudo apt-get)
else
    prefix=$(command -v sudo >/dev/null && echo "sudo " || echo "")
    echo "Install them${prefix:+ (sudo asks for your password)}${prefix:- as root}, then run this again:" >&2
    echo "    ${prefix}apt-get install -y $packages" >&2
    exit 1
fi

echo "Installing: ${apt[*]} install -y $packages" >&2
export DEBIAN_FRONTEND=noninteractive
"${apt[@]}" update -qq
# shellcheck disable=SC2086  # one word per package
"${apt[@]}" install -y -qq --no-install-recommends $packages >/dev/null

missing=() why=()
check
if ((${#missing[@]} > 0)); then
    echo "Still missing after apt-get install:" >&2
    printf '  %s\n' "${why[@]}" >&2
    exit 1
fi
