#!/usr/bin/env bash
# Runs the whole test suite: unit tests, and integration tests against real etcd and Redis
# processes that the tests start themselves. Installs Debian's etcd-server and redis-server first
# if their binaries are not found.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/ensure-installed.sh ETCD_BIN etcd etcd-server
scripts/ensure-installed.sh REDIS_BIN redis-server redis-server

exec mvn -B -ntp verify "$@"
