#!/usr/bin/env bash
# Runs the whole test suite: unit tests, and integration tests against real etcd processes that
# the tests start themselves. Installs Debian's etcd-server first if no etcd binary is found.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/ensure-etcd.sh

exec mvn -B -ntp verify "$@"
