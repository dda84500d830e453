#!/usr/bin/env bash
# The fairness demo: 3 processes with 2 workers each contend for one lock, each worker holding it
# about 1 s, once with fair=true and once with fair=false (where a newcomer of process 1 that calls
# tryLock() until it succeeds barges ahead of its process's waiting workers); each run ends with a
# summary (arrival order kept or not, who was served ahead of whom, longest wait, handoff gap)
# computed from the workers' output. The output has no colour codes, also on a terminal.
#
# Installs etcd (Debian's etcd-server) if it is missing, builds the sample application, starts one
# etcd on free loopback ports with a temporary data directory, and runs the demo
# (io.github.distlock.sample.demo). With --store redis it does the same with Redis (Debian's
# redis-server, one server without persistence) and runs the demo with distributed-lock.store=redis.
# With --store zookeeper it runs one standalone ZooKeeper server instead: the zookeeper jar of the
# build's version from the local Maven repository (class path from scripts/zookeeper-server/pom.xml,
# as the tests' ZooKeeperEnsemble runs it; no ZooKeeper installation needed), and the demo with
# distributed-lock.store=zookeeper.
# With --store jdbc it starts a private PostgreSQL server (Debian's postgresql, installed if missing:
# initdb and postgres from /usr/lib/postgresql/<version>/bin) with its data in the temporary directory,
# on a free loopback port, with a random password for the user distlock (scram-sha-256), run as the
# unprivileged user nobody when this script runs as root (PostgreSQL refuses root), and runs the demo
# with distributed-lock.store=jdbc on it (the password reaches the JVMs in their environment, not on a
# command line).
# On exit, also on failure or Ctrl-C, it stops the server and the demo's JVMs and deletes the
# temporary directory.
#
# Usage: scripts/demo.sh [--store etcd|redis|zookeeper|jdbc] [--demo.workers=3] [--demo.hold=500ms] ...   (any sample-app property)
# Environment: DEMO_SKIP_BUILD=1 reuses sample-app/target/sample-app-*.jar; ETCD_BIN and REDIS_BIN pick
# the server binaries, POSTGRES_BIN_DIR the directory of initdb and postgres.
set -euo pipefail
cd "$(dirname "$0")/.."

STORE=etcd
if [[ "${1:-}" == --store=* ]]; then
    STORE="${1#--store=}"
    shift
elif [[ "${1:-}" == --store ]]; then
    STORE="${2:-}"
    shift $(($# > 1 ? 2 : 1))
fi
if [[ "$STORE" != etcd && "$STORE" != redis && "$STORE" != zookeeper && "$STORE" != jdbc ]]; then
    echo "error: --store must be etcd, redis, zookeeper or jdbc, not '$STORE'" >&2
    exit 1
fi

# ZooKeeper needs no installation: its server is a jar that Maven fetches (start_zookeeper below).
if [[ "$STORE" == redis ]]; then
    scripts/ensure-installed.sh REDIS_BIN redis-server redis-server
    REDIS="${REDIS_BIN:-}"
    if [[ -z "$REDIS" ]]; then
        REDIS="$(command -v redis-server || echo /usr/bin/redis-server)"
    fi
elif [[ "$STORE" == etcd ]]; then
    scripts/ensure-installed.sh ETCD_BIN etcd etcd-server
    ETCD="${ETCD_BIN:-}"
    if [[ -z "$ETCD" ]]; then
        ETCD="$(command -v etcd || echo /usr/bin/etcd)"
    fi
elif [[ "$STORE" == jdbc ]]; then
    scripts/ensure-installed.sh POSTGRES_BIN_DIR postgres postgresql '/usr/lib/postgresql/*/bin'
    # The directory that holds both initdb and postgres: $POSTGRES_BIN_DIR, the newest Debian version, or the PATH.
    POSTGRES_BIN=""
    for directory in ${POSTGRES_BIN_DIR:-} $(compgen -G '/usr/lib/postgresql/*/bin' | sort -V -r) \
            "$(dirname "$(command -v postgres 2>/dev/null || echo /nonexistent/postgres)")"; do
        if [[ -x "$directory/initdb" && -x "$directory/postgres" ]]; then
            POSTGRES_BIN="$directory"
            break
        fi
    done
    if [[ -z "$POSTGRES_BIN" ]]; then
        echo "error: no directory with PostgreSQL's initdb and postgres found; set POSTGRES_BIN_DIR" >&2
        exit 1
    fi
fi

WORK_DIR="$(mktemp -d "${TMPDIR:-/tmp}/distlock-demo.XXXXXX")"
ETCD_PID=""
REDIS_PID=""
ZOOKEEPER_PID=""
POSTGRES_PID=""
DEMO_PID=""
trap 'rm -rf "$WORK_DIR"' EXIT

if [[ "${DEMO_SKIP_BUILD:-0}" != 1 ]]; then
    echo "Building the sample application (mvn package) ..."
    # Maven prints colour resets even with -B and style.color=never: keep its output in a log and
    # show it, without escape sequences, only if the build fails.
    if ! mvn -B -q -ntp -Dstyle.color=never -DskipTests -pl sample-app -am package >"$WORK_DIR/build.log" 2>&1; then
        sed -e 's/\x1b\[[0-9;]*[A-Za-z]//g' "$WORK_DIR/build.log" >&2
        echo "error: the build failed" >&2
        exit 1
    fi
fi
JAR="$(find sample-app/target -maxdepth 1 -name 'sample-app-*.jar' ! -name '*-tests.jar' | head -n 1)"
if [[ -z "$JAR" ]]; then
    echo "error: no sample-app/target/sample-app-*.jar; run without DEMO_SKIP_BUILD" >&2
    exit 1
fi

# Waits up to $2 tenths of a second for process $1 to exit; SIGKILLs it after that.
stop_process() {
    local pid="$1" tenths="$2"
    kill "$pid" 2>/dev/null || return 0
    for ((i = 0; i < tenths; i++)); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    kill -9 "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
}

cleanup() {
    local status=$?
    trap - EXIT INT TERM
    # The demo's worker JVMs exit with it: it stops them, and they exit when its pipes close.
    [[ -n "$DEMO_PID" ]] && stop_process "$DEMO_PID" 150
    [[ -n "$ETCD_PID" ]] && stop_process "$ETCD_PID" 50
    [[ -n "$REDIS_PID" ]] && stop_process "$REDIS_PID" 50
    [[ -n "$ZOOKEEPER_PID" ]] && stop_process "$ZOOKEEPER_PID" 50
    [[ -n "$POSTGRES_PID" ]] && stop_postgres
    rm -rf "$WORK_DIR"
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

port_free() {
    ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

random_free_port() {
    local port
    for _ in {1..100}; do
        port=$((20000 + RANDOM % 40000))
        if port_free "$port"; then
            echo "$port"
            return 0
        fi
    done
    echo "error: no free loopback port found" >&2
    return 1
}

etcd_healthy() {
    local reply
    reply="$( (exec 3<>"/dev/tcp/127.0.0.1/$CLIENT_PORT" \
        && printf 'GET /health HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' >&3 \
        && timeout 2 cat <&3) 2>/dev/null)" || return 1
    [[ "$reply" == *'"health":"true"'* ]]
}

redis_ready() {
    local reply
    reply="$( (exec 3<>"/dev/tcp/127.0.0.1/$REDIS_PORT" \
        && printf 'PING\r\n' >&3 \
        && timeout 2 head -c 7 <&3) 2>/dev/null)" || return 1
    [[ "$reply" == '+PONG'* ]]
}

# Starts redis-server without persistence; retries with another port if one was taken between the
# check and the bind.
start_redis() {
    for attempt in 1 2 3; do
        REDIS_PORT="$(random_free_port)"
        (exec "$REDIS" --port "$REDIS_PORT" --bind 127.0.0.1 --dir "$WORK_DIR" --daemonize no --save '' \
            --appendonly no --logfile "$WORK_DIR/redis.log") >"$WORK_DIR/redis.out" 2>&1 &
        REDIS_PID=$!
        for _ in {1..200}; do
            if redis_ready; then
                return 0
            fi
            kill -0 "$REDIS_PID" 2>/dev/null || break
            sleep 0.1
        done
        echo "redis-server did not start (attempt $attempt); last lines of its log:" >&2
        tail -n 5 "$WORK_DIR/redis.log" >&2 || true
        stop_process "$REDIS_PID" 20
        REDIS_PID=""
    done
    echo "error: could not start redis-server ($REDIS)" >&2
    exit 1
}

zookeeper_ready() {
    local reply
    reply="$( (exec 3<>"/dev/tcp/127.0.0.1/$ZOOKEEPER_PORT" \
        && printf 'srvr' >&3 \
        && timeout 2 cat <&3) 2>/dev/null)" || return 1
    [[ "$reply" == *'Mode: standalone'* ]]
}

# Starts a standalone ZooKeeper server (the zookeeper jar of the build's version, run as a JVM) on a
# loopback port with its data in the temporary directory; retries with another port if one was taken
# between the check and the bind.
start_zookeeper() {
    local classpath_file="$WORK_DIR/zookeeper.classpath" home="$WORK_DIR/zookeeper"
    if ! mvn -B -q -ntp -Dstyle.color=never -f scripts/zookeeper-server/pom.xml dependency:build-classpath \
            -Dmdep.outputFile="$classpath_file" >"$WORK_DIR/zookeeper-classpath.log" 2>&1; then
        sed -e 's/\x1b\[[0-9;]*[A-Za-z]//g' "$WORK_DIR/zookeeper-classpath.log" >&2
        echo "error: Maven could not resolve the ZooKeeper server's class path (scripts/zookeeper-server/pom.xml)" >&2
        exit 1
    fi
    mkdir -p "$home/data"
    # The server logs to a file, not to the demo's output.
    cat >"$home/logback.xml" <<LOGBACK
<configuration>
  <appender name="FILE" class="ch.qos.logback.core.FileAppender">
    <file>$home/zookeeper.log</file>
    <encoder><pattern>%d{HH:mm:ss.SSS} %-5level [%thread] %logger{36} - %msg%n</pattern></encoder>
  </appender>
  <root level="INFO"><appender-ref ref="FILE"/></root>
</configuration>
LOGBACK
    for attempt in 1 2 3; do
        ZOOKEEPER_PORT="$(random_free_port)"
        cat >"$home/zoo.cfg" <<ZOOCFG
tickTime=2000
dataDir=$home/data
clientPort=$ZOOKEEPER_PORT
clientPortAddress=127.0.0.1
admin.enableServer=false
4lw.commands.whitelist=srvr
maxClientCnxns=0
ZOOCFG
        (exec java -Xmx256m -XX:+UseSerialGC -XX:-UsePerfData -Dzookeeper.jmx.log4j.disable=true \
            -Dlogback.configurationFile="$home/logback.xml" -cp "$(cat "$classpath_file")" \
            org.apache.zookeeper.server.ZooKeeperServerMain "$home/zoo.cfg") >"$WORK_DIR/zookeeper.out" 2>&1 &
        ZOOKEEPER_PID=$!
        for _ in {1..300}; do
            if zookeeper_ready; then
                return 0
            fi
            kill -0 "$ZOOKEEPER_PID" 2>/dev/null || break
            sleep 0.1
        done
        echo "ZooKeeper did not start (attempt $attempt); last lines of its log:" >&2
        tail -n 5 "$home/zookeeper.log" "$WORK_DIR/zookeeper.out" >&2 || true
        stop_process "$ZOOKEEPER_PID" 20
        ZOOKEEPER_PID=""
    done
    echo "error: could not start ZooKeeper (java -cp <zookeeper jars> ZooKeeperServerMain)" >&2
    exit 1
}

# Replaces the calling subshell with a command run as the PostgreSQL server's user, in its directory,
# without the caller's PG* client settings: as nobody through setpriv when this script runs as root,
# else as this user. Call it in a subshell: ( exec_as_postgres_user initdb ... ).
exec_as_postgres_user() {
    for variable in $(compgen -e); do
        if [[ "$variable" == PG* ]]; then
            unset "$variable"
        fi
    done
    export HOME="$POSTGRES_HOME"
    cd "$POSTGRES_HOME"
    if [[ "$(id -u)" -eq 0 ]]; then
        exec setpriv --reuid="$(id -u nobody)" --regid="$(id -g nobody)" --clear-groups -- "$@"
    fi
    exec "$@"
}

# Creates a PostgreSQL cluster in the temporary directory (superuser distlock, a random password,
# password authentication only) and starts postgres on a free loopback port, its Unix socket in the
# same directory; retries with another port if one was taken between the check and the bind.
start_postgres() {
    POSTGRES_HOME="$WORK_DIR/postgres"
    mkdir -p "$POSTGRES_HOME"
    if [[ "$(id -u)" -eq 0 ]]; then
        # nobody must reach its directory inside this root-owned one, and own it.
        chmod 711 "$WORK_DIR"
        chown "$(id -u nobody):$(id -g nobody)" "$POSTGRES_HOME"
    fi
    chmod 700 "$POSTGRES_HOME"
    POSTGRES_PASSWORD="$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')"
    (exec_as_postgres_user sh -c 'umask 077 && cat >password') <<<"$POSTGRES_PASSWORD"
    if ! (exec_as_postgres_user "$POSTGRES_BIN/initdb" --pgdata="$POSTGRES_HOME/data" --username=distlock \
            --pwfile="$POSTGRES_HOME/password" --auth=scram-sha-256 --encoding=UTF8 --no-locale --no-sync) \
            >"$WORK_DIR/initdb.log" 2>&1; then
        tail -n 20 "$WORK_DIR/initdb.log" >&2
        echo "error: initdb failed ($POSTGRES_BIN/initdb)" >&2
        exit 1
    fi
    rm -f "$POSTGRES_HOME/password"
    for attempt in 1 2 3; do
        POSTGRES_PORT="$(random_free_port)"
        # In a subshell that becomes postgres (exec), so that $! is the server's own PID.
        (exec_as_postgres_user "$POSTGRES_BIN/postgres" -D "$POSTGRES_HOME/data" -k "$POSTGRES_HOME" \
            -p "$POSTGRES_PORT" -c listen_addresses=127.0.0.1 -c logging_collector=off) >"$WORK_DIR/postgres.log" 2>&1 &
        POSTGRES_PID=$!
        for _ in {1..300}; do
            if grep -q 'database system is ready to accept connections' "$WORK_DIR/postgres.log" 2>/dev/null; then
                return 0
            fi
            kill -0 "$POSTGRES_PID" 2>/dev/null || break
            sleep 0.1
        done
        echo "PostgreSQL did not start (attempt $attempt); last lines of its log:" >&2
        tail -n 5 "$WORK_DIR/postgres.log" >&2 || true
        stop_postgres
    done
    echo "error: could not start PostgreSQL ($POSTGRES_BIN/postgres)" >&2
    exit 1
}

# Fast shutdown (SIGINT: disconnects clients, then exits); SIGKILL to the server and its processes
# if it has not exited after 10 s.
stop_postgres() {
    local pid="$POSTGRES_PID"
    POSTGRES_PID=""
    kill -INT "$pid" 2>/dev/null || return 0
    for _ in {1..100}; do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then
        pkill -KILL -P "$pid" 2>/dev/null || true
        kill -9 "$pid" 2>/dev/null || true
    fi
    wait "$pid" 2>/dev/null || true
}

if [[ "$STORE" == jdbc ]]; then
    start_postgres
    POSTGRES_VERSION="$("$POSTGRES_BIN/postgres" --version 2>/dev/null | sed -n 's/.*(PostgreSQL) \([^ ]*\).*/\1/p' || true)"
    echo "PostgreSQL $POSTGRES_VERSION running on 127.0.0.1:$POSTGRES_PORT (user distlock, random password, data in $WORK_DIR/postgres)"
    # The password in the environment, which other users cannot read, rather than on the command line.
    SPRING_DATASOURCE_PASSWORD="$POSTGRES_PASSWORD" java -XX:-UsePerfData -jar "$JAR" --spring.profiles.active=demo \
        --distributed-lock.store=jdbc --distributed-lock.jdbc.initialize-schema=always \
        --spring.datasource.url="jdbc:postgresql://127.0.0.1:$POSTGRES_PORT/postgres" \
        --spring.datasource.username=distlock "$@" &
    DEMO_PID=$!
elif [[ "$STORE" == zookeeper ]]; then
    start_zookeeper
    ZOOKEEPER_VERSION="$(tr ':' '\n' <"$WORK_DIR/zookeeper.classpath" | sed -n 's|.*/zookeeper-\([0-9][0-9.]*\)\.jar$|\1|p' | head -n 1)"
    echo "ZooKeeper $ZOOKEEPER_VERSION running on 127.0.0.1:$ZOOKEEPER_PORT (standalone, data in $WORK_DIR/zookeeper)"
    java -XX:-UsePerfData -jar "$JAR" --spring.profiles.active=demo --distributed-lock.store=zookeeper \
        --distributed-lock.zookeeper.connect-string="127.0.0.1:$ZOOKEEPER_PORT" "$@" &
    DEMO_PID=$!
elif [[ "$STORE" == redis ]]; then
    start_redis
    REDIS_VERSION="$("$REDIS" --version 2>/dev/null | sed -n 's/.* v=\([^ ]*\).*/\1/p' || true)"
    echo "redis-server $REDIS_VERSION running on 127.0.0.1:$REDIS_PORT (no persistence, files in $WORK_DIR)"
    java -XX:-UsePerfData -jar "$JAR" --spring.profiles.active=demo --distributed-lock.store=redis \
        --spring.data.redis.host=127.0.0.1 --spring.data.redis.port="$REDIS_PORT" "$@" &
    DEMO_PID=$!
else
    # Starts etcd; retries with other ports if one was taken between the check and the bind.
    for attempt in 1 2 3; do
        CLIENT_PORT="$(random_free_port)"
        PEER_PORT="$(random_free_port)"
        [[ "$CLIENT_PORT" != "$PEER_PORT" ]] || continue
        rm -rf "$WORK_DIR/etcd"
        (
            # etcd reads ETCD_* variables as flags: keep the caller's out of this member.
            for variable in $(compgen -e); do
                if [[ "$variable" == ETCD_* && "$variable" != ETCD_UNSUPPORTED_ARCH ]]; then
                    unset "$variable"
                fi
            done
            exec "$ETCD" --name demo --data-dir "$WORK_DIR/etcd" \
                --listen-client-urls "http://127.0.0.1:$CLIENT_PORT" --advertise-client-urls "http://127.0.0.1:$CLIENT_PORT" \
                --listen-peer-urls "http://127.0.0.1:$PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$PEER_PORT" \
                --initial-cluster "demo=http://127.0.0.1:$PEER_PORT" --logger zap --log-outputs stderr
        ) >"$WORK_DIR/etcd.log" 2>&1 &
        ETCD_PID=$!
        for _ in {1..200}; do
            if etcd_healthy; then
                break 2
            fi
            kill -0 "$ETCD_PID" 2>/dev/null || break
            sleep 0.1
        done
        echo "etcd did not start (attempt $attempt); last lines of its log:" >&2
        tail -n 5 "$WORK_DIR/etcd.log" >&2 || true
        stop_process "$ETCD_PID" 20
        ETCD_PID=""
    done
    if [[ -z "$ETCD_PID" ]]; then
        echo "error: could not start etcd ($ETCD)" >&2
        exit 1
    fi
    ETCD_VERSION="$("$ETCD" --version 2>/dev/null | head -n 1 || true)"
    echo "etcd ${ETCD_VERSION##* } running on 127.0.0.1:$CLIENT_PORT (data in $WORK_DIR)"

    java -XX:-UsePerfData -jar "$JAR" --spring.profiles.active=demo \
        --distributed-lock.etcd.endpoints="http://127.0.0.1:$CLIENT_PORT" "$@" &
    DEMO_PID=$!
fi
set +e
wait "$DEMO_PID"
STATUS=$?
set -e
DEMO_PID=""
exit "$STATUS"
