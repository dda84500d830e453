#!/usr/bin/env bash
# Makes sure a server binary is available, installing its Debian package when it is not (needs
# root or sudo): scripts/ensure-installed.sh <override variable> <binary> <package>, for example
# 'ETCD_BIN etcd etcd-server'. The binary counts as available when $<variable> names an executable,
# or it is in /usr/bin or on the PATH. Packages that start a system server where systemd runs do
# not matter: the tests and the demo start their own servers on free ports.
set -euo pipefail

if [[ $# -ne 3 ]]; then
    echo "usage: $0 <override variable> <binary> <debian package>" >&2
    exit 2
fi
variable="$1" binary="$2" package="$3"
override="${!variable:-}"

if [[ -n "${override}" && -x "${override}" ]] || [[ -x "/usr/bin/${binary}" ]] \
        || command -v "${binary}" >/dev/null 2>&1; then
    exit 0
fi

echo "${binary} not found: installing Debian's ${package} package" >&2
SUDO=""
if [[ "$(id -u)" -ne 0 ]]; then
    if command -v sudo >/dev/null 2>&1; then
        SUDO="sudo"
    else
        echo "error: ${binary} is missing and this user cannot install packages; run as root:" >&2
        echo "  apt-get update && apt-get install -y ${package}" >&2
        exit 1
    fi
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${package}" >/dev/null
if [[ ! -x "/usr/bin/${binary}" ]]; then
    echo "error: ${package} installed but /usr/bin/${binary} is missing" >&2
    exit 1
fi
"/usr/bin/${binary}" --version | head -1 >&2
