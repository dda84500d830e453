#!/usr/bin/env bash
# Makes sure a server binary is available, installing its Debian package when it is not (needs
# root or sudo): scripts/ensure-installed.sh <override variable> <binary> <package> [<directory>...],
# for example 'ETCD_BIN etcd etcd-server' or "POSTGRES_BIN_DIR postgres postgresql '/usr/lib/postgresql/*/bin'".
# The binary counts as available when $<variable> names it (an executable file, or a directory
# that holds it), or it is in /usr/bin, in one of the given directories (shell patterns allowed)
# or on the PATH.
#
# The install never starts the package's system server: while apt-get runs, a policy-rc.d that
# denies every service start is in place (unless the machine already has a policy-rc.d, which is
# then left as it is). The tests and the demo start their own servers on free ports; a system
# server would only occupy ports and memory.
set -euo pipefail

if [[ $# -lt 3 ]]; then
    echo "usage: $0 <override variable> <binary> <debian package> [<directory>...]" >&2
    exit 2
fi
variable="$1" binary="$2" package="$3"
shift 3
extra_directories=("$@")
override="${!variable:-}"

# Prints the binary's path and succeeds when it is found.
find_binary() {
    if [[ -n "${override}" ]]; then
        if [[ -f "${override}" && -x "${override}" ]]; then
            echo "${override}"
            return 0
        fi
        if [[ -d "${override}" && -x "${override}/${binary}" ]]; then
            echo "${override}/${binary}"
            return 0
        fi
    fi
    local pattern directory
    for pattern in /usr/bin "${extra_directories[@]}"; do
        # Unquoted on purpose: the pattern expands to every matching directory, newest version last.
        for directory in $(compgen -G "${pattern}" | sort -V -r); do
            if [[ -x "${directory}/${binary}" ]]; then
                echo "${directory}/${binary}"
                return 0
            fi
        done
    done
    command -v "${binary}" 2>/dev/null
}

if find_binary >/dev/null; then
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

POLICY=/usr/sbin/policy-rc.d
if [[ ! -e "${POLICY}" ]]; then
    # Exit code 101 means "action forbidden" to invoke-rc.d and deb-systemd-invoke.
    printf '#!/bin/sh\n# scripts/ensure-installed.sh: no service starts while it installs %s\nexit 101\n' "${package}" \
        | $SUDO tee "${POLICY}" >/dev/null
    $SUDO chmod 755 "${POLICY}"
    trap '$SUDO rm -f "${POLICY}"' EXIT
fi

export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq </dev/null
$SUDO apt-get install -y -qq --no-install-recommends -o Dpkg::Options::=--force-confdef \
    -o Dpkg::Options::=--force-confold "${package}" </dev/null >/dev/null
if ! installed="$(find_binary)"; then
    echo "error: ${package} installed but no ${binary} binary was found (looked in /usr/bin ${extra_directories[*]} and the PATH)" >&2
    exit 1
fi
# sed reads it all: with head, a multi-line --version (etcd's) could die of SIGPIPE and fail the script.
"${installed}" --version 2>&1 | sed -n 1p >&2 || true
