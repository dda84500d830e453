#!/usr/bin/env bash
# A nemesis run: worker JVMs contend for locks on a real store while processes are killed, paused
# and restarted and entries deleted behind the library's back, on a schedule drawn from a seed;
# then a checker reads every process's history and holds it to the guarantees (DESIGN.md G1-G12).
#
#   scripts/nemesis.sh [--store etcd|redis|zookeeper|postgres|mariadb] [--duration 10m] [--seed N] [--workers 4] [--threads 4]
#                      [--ttl 3s] [--history-dir DIR] [-o]
#
# Defaults: etcd, 10 minutes, a random seed (printed first; pass it again to replay the same
# fault schedule), 4 workers of 4 threads, a 3 s lease TTL, histories under
# lock-spring-boot-autoconfigure/target/nemesis/. -o runs Maven offline. Prints the report's
# table; exits 0 if the run broke no guarantee, 1 if it did, 2 for bad arguments or a store not
# supported yet, 3 if the run itself failed. Every process it starts (store members, worker JVMs)
# is stopped by its PID at the end, also on failure or Ctrl-C.
set -euo pipefail
cd "$(dirname "$0")/.."

store=etcd duration=10m seed="" offline=() runner_args=() history_dir=""
while [[ $# -gt 0 ]]; do
    case "$1" in
        -o|--offline) offline=(-o); shift ;;
        --store) store="${2:?--store needs a value}"; shift 2 ;;
        --duration) duration="${2:?--duration needs a value}"; shift 2 ;;
        --seed) seed="${2:?--seed needs a value}"; shift 2 ;;
        --history-dir) history_dir="${2:?--history-dir needs a value}"; shift 2 ;;
        --workers|--threads|--ttl) runner_args+=("$1" "${2:?$1 needs a value}"); shift 2 ;;
        -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "error: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
done

# What each store's servers need installed; the ZooKeeper servers run from its Maven jar.
case "$store" in
    etcd) install=(ETCD_BIN etcd etcd-server) ;;
    redis) install=(REDIS_BIN redis-server redis-server) ;;
    zookeeper) install=() ;;
    postgres) install=(POSTGRES_BIN_DIR postgres postgresql '/usr/lib/postgresql/*/bin') ;;
    mariadb) install=(MARIADBD_BIN mariadbd mariadb-server /usr/sbin) ;;
    *) echo "error: unknown store '$store'; supported: etcd, redis, zookeeper, postgres, mariadb" >&2
        exit 2 ;;
esac

if [[ -z "$seed" ]]; then
    seed="$(od -An -N6 -tu8 /dev/urandom | tr -d ' ')"
fi
echo "nemesis: seed $seed"

if [[ ${#install[@]} -gt 0 ]]; then
    scripts/ensure-installed.sh "${install[@]}"
fi
if [[ "$store" == postgres || "$store" == mariadb ]]; then
    # The database server runs under libfaketime, so that the run can step its clock.
    scripts/ensure-installed.sh FAKETIME_BIN faketime faketime
fi

module=lock-spring-boot-autoconfigure
mkdir -p "$module/target"
classpath_file="$module/target/nemesis.classpath"
echo "nemesis: compiling the tests and resolving their class path" >&2
mvn -B -q -ntp "${offline[@]}" -Dstyle.color=never -pl "$module" -am test-compile >&2
mvn -B -q -ntp "${offline[@]}" -Dstyle.color=never -pl "$module" dependency:build-classpath \
    -Dmdep.includeScope=test -Dmdep.outputFile="target/nemesis.classpath" >&2

if [[ -z "$history_dir" ]]; then
    history_dir="$module/target/nemesis/$store-$seed-$(date +%Y%m%d-%H%M%S)"
fi
mkdir -p "$history_dir"

# exec: the runner is this script's process, so a Ctrl-C or SIGTERM reaches its shutdown hooks,
# which kill the store members and workers it started.
exec java -cp "$module/target/test-classes:$module/target/classes:$(cat "$classpath_file")" \
    io.github.distlock.nemesis.NemesisRunner --store "$store" --duration "$duration" --seed "$seed" \
    --history-dir "$history_dir" "${runner_args[@]}"
