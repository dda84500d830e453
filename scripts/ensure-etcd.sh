#!/usr/bin/env bash
# Makes sure an etcd server binary is available: ETCD_BIN, /usr/bin/etcd or etcd on PATH;
# otherwise installs Debian's etcd-server package (needs root or sudo).
set -euo pipefail

if [[ -n "${ETCD_BIN:-}" && -x "${ETCD_BIN}" ]] || [[ -x /usr/bin/etcd ]] || command -v etcd >/dev/null 2>&1; then
    exit 0
fi

echo "etcd not found: installing Debian's etcd-server package" >&2
SUDO=""
if [[ "$(id -u)" -ne 0 ]]; then
    if command -v sudo >/dev/null 2>&1; then
        SUDO="sudo"
    else
        echo "error: etcd is missing and this user cannot install packages; run as root:" >&2
        echo "  apt-get update && apt-get install -y etcd-server" >&2
        exit 1
    fi
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends etcd-server >/dev/null
# The package starts a system etcd on the default ports where systemd runs; the tests use their own.
if [[ ! -x /usr/bin/etcd ]]; then
    echo "error: etcd-server installed but /usr/bin/etcd is missing" >&2
    exit 1
fi
/usr/bin/etcd --version | head -1 >&2
