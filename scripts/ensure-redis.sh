#!/usr/bin/env bash
# Makes sure a redis-server binary is available: REDIS_BIN, /usr/bin/redis-server or redis-server
# on PATH; otherwise installs Debian's redis-server package (needs root or sudo). The tests start
# their own servers on free loopback ports; they never use a system Redis.
set -euo pipefail

if [[ -n "${REDIS_BIN:-}" && -x "${REDIS_BIN}" ]] || [[ -x /usr/bin/redis-server ]] \
        || command -v redis-server >/dev/null 2>&1; then
    exit 0
fi

echo "redis-server not found: installing Debian's redis-server package" >&2
SUDO=""
if [[ "$(id -u)" -ne 0 ]]; then
    if command -v sudo >/dev/null 2>&1; then
        SUDO="sudo"
    else
        echo "error: redis-server is missing and this user cannot install packages; run as root:" >&2
        echo "  apt-get update && apt-get install -y redis-server" >&2
        exit 1
    fi
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends redis-server >/dev/null
if [[ ! -x /usr/bin/redis-server ]]; then
    echo "error: redis-server installed but /usr/bin/redis-server is missing" >&2
    exit 1
fi
/usr/bin/redis-server --version >&2
