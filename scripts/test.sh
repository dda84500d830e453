#!/usr/bin/env bash
# Runs the whole test suite: unit tests, and integration tests against real etcd, Redis, ZooKeeper
# (the zookeeper jar, run as a JVM), PostgreSQL and MariaDB processes that the tests start themselves. Installs Debian's etcd-server,
# redis-server, postgresql and mariadb-server first if their binaries are not found, without
# starting their system servers (scripts/ensure-installed.sh), and faketime (its libfaketime steps
# the clock of the database servers that the clock-step tests and the nemesis start).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/ensure-installed.sh ETCD_BIN etcd etcd-server
scripts/ensure-installed.sh REDIS_BIN redis-server redis-server
scripts/ensure-installed.sh POSTGRES_BIN_DIR postgres postgresql '/usr/lib/postgresql/*/bin'
scripts/ensure-installed.sh MARIADBD_BIN mariadbd mariadb-server /usr/sbin
scripts/ensure-installed.sh FAKETIME_BIN faketime faketime

exec mvn -B -ntp verify "$@"
