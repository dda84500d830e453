package io.github.distlock.autoconfigure;

import java.nio.file.Path;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import io.github.distlock.LocalHandoff;
import io.github.distlock.aop.DistributedLockAdvisor;
import io.github.distlock.etcd.EtcdLockRegistry;
import io.github.distlock.jdbc.JdbcLockRegistry;
import io.github.distlock.redis.RedisLockRegistry;
import io.github.distlock.zookeeper.ZookeeperLockRegistry;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.convert.DurationStyle;
import org.springframework.boot.convert.DurationUnit;
import org.springframework.core.style.ToStringCreator;

/**
 * Configuration of distributed locks, under {@code distributed-lock}. Values are checked as they
 * are bound, so a bad one fails start-up with a message naming the property and the value.
 */
@ConfigurationProperties("distributed-lock")
public class DistributedLockProperties {

    /**
     * Whether to enable distributed locks and the @DistributedLock annotation. When disabled,
     * annotated methods run without a lock (methods woven in aspectj mode fail), and a warning
     * at start-up names them.
     */
    private boolean enabled = true;

    /**
     * Where locks are kept: 'etcd' shares them with every instance connected to the same etcd
     * cluster; 'redis' with every instance connected to the same Redis, through the application's
     * spring.data.redis connection; 'zookeeper' with every instance connected to the same
     * ZooKeeper ensemble; 'jdbc' with every instance that uses the same SQL database, through the
     * application's DataSource (spring.datasource); 'in-memory' keeps them in this JVM only, for
     * tests and single-instance runs.
     */
    private Store store = Store.ETCD;

    /**
     * How long @DistributedLock waits for a lock when the annotation names no wait timeout. 0
     * tries once without waiting.
     */
    private Duration waitTimeout = Duration.ofSeconds(30);

    /**
     * Order of the @DistributedLock advice among other advice on the same method. The default
     * takes precedence over @Transactional, so the lock is acquired before a transaction begins
     * and released after it completes.
     */
    private int aspectOrder = DistributedLockAdvisor.DEFAULT_ORDER;

    /**
     * Identity recorded as the holder of this instance's locks, shown in errors, the distributedlocks endpoint and the store's own tools.
     * Defaults to '<spring.application.name>@<host>:<pid>', or '<host>:<pid>' when no
     * application name is set.
     */
    private @Nullable String ownerIdentity;

    private final Etcd etcd = new Etcd();

    private final Redis redis = new Redis();

    private final Zookeeper zookeeper = new Zookeeper();

    private final Jdbc jdbc = new Jdbc();

    private final Metrics metrics = new Metrics();

    private final Aop aop = new Aop();

    private final LocalHandoffProperties localHandoff = new LocalHandoffProperties();

    public boolean isEnabled() {
        return this.enabled;
    }

    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    public Store getStore() {
        return this.store;
    }

    public void setStore(Store store) {
        this.store = store;
    }

    public Duration getWaitTimeout() {
        return this.waitTimeout;
    }

    public void setWaitTimeout(Duration waitTimeout) {
        PropertyChecks.notNegative("distributed-lock.wait-timeout", waitTimeout);
        this.waitTimeout = waitTimeout;
    }

    public int getAspectOrder() {
        return this.aspectOrder;
    }

    public void setAspectOrder(int aspectOrder) {
        this.aspectOrder = aspectOrder;
    }

    public @Nullable String getOwnerIdentity() {
        return this.ownerIdentity;
    }

    public void setOwnerIdentity(@Nullable String ownerIdentity) {
        this.ownerIdentity = ownerIdentity;
    }

    public Etcd getEtcd() {
        return this.etcd;
    }

    public Redis getRedis() {
        return this.redis;
    }

    public Zookeeper getZookeeper() {
        return this.zookeeper;
    }

    public Jdbc getJdbc() {
        return this.jdbc;
    }

    public Metrics getMetrics() {
        return this.metrics;
    }

    public Aop getAop() {
        return this.aop;
    }

    public LocalHandoffProperties getLocalHandoff() {
        return this.localHandoff;
    }

    @Override
    public String toString() {
        return new ToStringCreator(this).append("enabled", this.enabled)
            .append("store", this.store)
            .append("waitTimeout", this.waitTimeout)
            .append("aspectOrder", this.aspectOrder)
            .append("ownerIdentity", this.ownerIdentity)
            .append("etcd", this.etcd)
            .append("redis", this.redis)
            .append("zookeeper", this.zookeeper)
            .append("jdbc", this.jdbc)
            .append("metrics", this.metrics)
            .append("aopMode", this.aop.getMode())
            .append("localHandoff", this.localHandoff)
            .toString();
    }

    /** Meters of @DistributedLock calls. */
    public static class Metrics {

        /**
         * How many distinct lock keys get a 'key' tag of their own on the wait and hold timers and
         * the lost counter; later keys are tagged 'other'. 0 tags no key. Only for applications
         * with a small, fixed set of keys: each tagged key makes time series of its own.
         */
        private int maxKeyTags = 0;

        public int getMaxKeyTags() {
            return this.maxKeyTags;
        }

        public void setMaxKeyTags(int maxKeyTags) {
            PropertyChecks.notNegative("distributed-lock.metrics.max-key-tags", maxKeyTags);
            this.maxKeyTags = maxKeyTags;
        }

        @Override
        public String toString() {
            return new ToStringCreator(this).append("maxKeyTags", this.maxKeyTags).toString();
        }
    }

    /**
     * How unfair locks are shared among the threads of this instance without store round trips
     * (see io.github.distlock.LocalHandoff). Fair locks never take part.
     */
    public static class LocalHandoffProperties {

        /**
         * How long the instance may keep passing an unfair lock from one of its threads to the
         * next without a store round trip once another instance (or a fair waiter) may be waiting
         * for it; then the lock goes back to the store and the others get their turn. At most 1023
         * passes per store acquisition in any case. 0 sends every acquisition to the store.
         */
        private Duration window = Duration.ofMillis(10);

        /**
         * How long the instance keeps an unfair lock's store entry after its last unlock, so that
         * its next acquisition of the key costs no round trip. Ended at once when another instance
         * starts waiting; meanwhile other instances see the lock as held (a tryLock without a
         * timeout fails there). Only on stores that report a new waiter without a round trip
         * (etcd, Redis, ZooKeeper, PostgreSQL, in-memory; not MySQL, MariaDB or H2; on PostgreSQL
         * only instances that linger tell, so set it alike on every instance); 0 turns it off.
         */
        private Duration linger = Duration.ofMillis(0);

        public Duration getWindow() {
            return this.window;
        }

        public void setWindow(Duration window) {
            PropertyChecks.notNegative("distributed-lock.local-handoff.window", window);
            this.window = window;
        }

        public Duration getLinger() {
            return this.linger;
        }

        public void setLinger(Duration linger) {
            PropertyChecks.notNegative("distributed-lock.local-handoff.linger", linger);
            this.linger = linger;
        }

        /** @return the settings for a registry builder */
        public LocalHandoff toLocalHandoff() {
            return new LocalHandoff(this.window, this.linger);
        }

        @Override
        public String toString() {
            return new ToStringCreator(this).append("window", this.window).append("linger", this.linger).toString();
        }
    }

    /** How @DistributedLock is applied. */
    public static class Aop {

        /**
         * How @DistributedLock methods are advised: 'proxy' wraps beans in Spring AOP proxies, so
         * only calls through the proxy are locked; 'aspectj' leaves beans unproxied and locks
         * every execution of an annotated method, self-invocations included, in classes woven
         * with io.github.distlock.aop.DistributedLockAspect (load-time weaving with the AspectJ
         * agent and a META-INF/aop.xml, or compile-time weaving).
         */
        private Mode mode = Mode.PROXY;

        public Mode getMode() {
            return this.mode;
        }

        public void setMode(Mode mode) {
            this.mode = mode;
        }

        /** How @DistributedLock methods are advised. */
        public enum Mode {

            /** Spring AOP proxies: calls from outside the bean are locked, self-invocations are not. */
            PROXY,

            /** AspectJ weaving: every execution of an annotated method is locked. */
            ASPECTJ

        }
    }

    /** Where locks are kept. */
    public enum Store {

        /** In etcd, shared by every instance connected to the same cluster. */
        ETCD,

        /** In Redis, shared by every instance connected to the same Redis, on the application's connection. */
        REDIS,

        /** In ZooKeeper, shared by every instance connected to the same ensemble. */
        ZOOKEEPER,

        /** In an SQL database, shared by every instance that uses the same database, on the application's DataSource. */
        JDBC,

        /** In this JVM only. */
        IN_MEMORY;

        /**
         * @return the value as {@code distributed-lock.store} documents it ({@code etcd},
         * {@code in-memory}), which start-up failures and condition reports list
         */
        @Override
        public String toString() {
            return name().toLowerCase(Locale.ROOT).replace('_', '-');
        }
    }

    /** Connection to etcd and how locks are kept there. */
    public static class Etcd {

        /** gRPC raises a client's keep-alive time to at least this, silently. */
        private static final Duration MIN_GRPC_KEEP_ALIVE_TIME = Duration.ofSeconds(10);

        /**
         * URLs of the etcd members to connect to, all http:// or all https:// (https:// uses
         * TLS).
         */
        private List<String> endpoints = new ArrayList<>(List.of("http://127.0.0.1:2379"));

        /**
         * Key prefix under which locks are kept, so that applications can share a cluster. Must end
         * with a slash and must not contain '#'; namespaces never share locks, also when one is
         * nested in another.
         */
        private String namespace = "/distributed-lock/";

        /**
         * TTL of the session lease, in whole seconds: the upper bound on how long a crashed
         * holder keeps others waiting, and on how long a holder cut off from etcd believes it
         * still holds its locks. etcd grants at least its minimum TTL (2s with its default
         * election timeout); a shorter value runs on the granted TTL and logs a warning.
         */
        @DurationUnit(ChronoUnit.SECONDS)
        private Duration leaseTtl = Duration.ofSeconds(10);

        /**
         * Timeout for establishing a connection to an etcd member.
         */
        private Duration connectTimeout = Duration.ofSeconds(5);

        /**
         * Upper bound on each etcd request. An acquisition retries failed requests until its
         * wait timeout; a release that etcd does not confirm in time is retried in the
         * background. Requests that may be sent twice (releases, queue reads, deletes) are sent
         * again after a twentieth of it (200 ms to 1 s), so that a leader loss costs about one
         * election; the lock watch stream is asked for progress after a fifth of it in silence
         * while locks are awaited, and reopened if it does not answer.
         */
        private Duration requestTimeout = Duration.ofSeconds(5);

        /**
         * Interval of gRPC keep-alive pings on the connection to etcd, at least 10s (gRPC raises
         * anything shorter). Together with the keep-alive timeout it bounds how long the client
         * keeps a connection to a frozen or partitioned member; calls and session keep-alives do
         * not wait for it: they are sent again to another member after a twentieth of the
         * request timeout.
         */
        private Duration keepAliveTime = Duration.ofSeconds(10);

        /**
         * How long to wait for the answer to a gRPC keep-alive ping before the connection to an
         * etcd member is considered dead.
         */
        private Duration keepAliveTimeout = Duration.ofSeconds(3);

        /**
         * Whether the application fails to start when etcd cannot be reached at start-up. By
         * default it starts anyway, logs a warning, and acquisitions fail with
         * LockAcquisitionException until etcd is reachable. With fail-fast, start-up waits for a
         * session lease and the watch stream, up to twice the request timeout.
         */
        private boolean failFast;

        /**
         * User name for etcd authentication. Set together with the password.
         */
        private @Nullable String username;

        /**
         * Password for etcd authentication. Set together with the user name.
         */
        private @Nullable String password;

        private final Tls tls = new Tls();

        public List<String> getEndpoints() {
            return this.endpoints;
        }

        public void setEndpoints(List<String> endpoints) {
            if (!EtcdEndpoints.seemToCarryCredentials(endpoints)) {
                EtcdEndpoints.parse(endpoints);
            }
            this.endpoints = endpoints;
        }

        public String getNamespace() {
            return this.namespace;
        }

        public void setNamespace(String namespace) {
            String problem = EtcdLockRegistry.namespaceProblem(namespace);
            if (problem != null) {
                throw new IllegalArgumentException("distributed-lock.etcd.namespace " + problem);
            }
            this.namespace = namespace;
        }

        public Duration getLeaseTtl() {
            return this.leaseTtl;
        }

        public void setLeaseTtl(Duration leaseTtl) {
            PropertyChecks.check("distributed-lock.etcd.lease-ttl", leaseTtl, EtcdLockRegistry.leaseTtlProblem(leaseTtl));
            this.leaseTtl = leaseTtl;
        }

        public Duration getConnectTimeout() {
            return this.connectTimeout;
        }

        public void setConnectTimeout(Duration connectTimeout) {
            PropertyChecks.timeout("distributed-lock.etcd.connect-timeout", connectTimeout);
            this.connectTimeout = connectTimeout;
        }

        public Duration getKeepAliveTime() {
            return this.keepAliveTime;
        }

        public void setKeepAliveTime(Duration keepAliveTime) {
            PropertyChecks.check("distributed-lock.etcd.keep-alive-time", keepAliveTime,
                    (keepAliveTime == null || keepAliveTime.compareTo(MIN_GRPC_KEEP_ALIVE_TIME) < 0)
                            ? "must be at least 10s (gRPC's least keep-alive time)" : null);
            this.keepAliveTime = keepAliveTime;
        }

        public Duration getKeepAliveTimeout() {
            return this.keepAliveTimeout;
        }

        public void setKeepAliveTimeout(Duration keepAliveTimeout) {
            PropertyChecks.positive("distributed-lock.etcd.keep-alive-timeout", keepAliveTimeout);
            this.keepAliveTimeout = keepAliveTimeout;
        }

        public boolean isFailFast() {
            return this.failFast;
        }

        public void setFailFast(boolean failFast) {
            this.failFast = failFast;
        }

        public Duration getRequestTimeout() {
            return this.requestTimeout;
        }

        public void setRequestTimeout(Duration requestTimeout) {
            PropertyChecks.timeout("distributed-lock.etcd.request-timeout", requestTimeout);
            this.requestTimeout = requestTimeout;
        }

        public @Nullable String getUsername() {
            return this.username;
        }

        public void setUsername(@Nullable String username) {
            this.username = username;
        }

        public @Nullable String getPassword() {
            return this.password;
        }

        public void setPassword(@Nullable String password) {
            this.password = password;
        }

        public Tls getTls() {
            return this.tls;
        }

        @Override
        public String toString() {
            return new ToStringCreator(this).append("endpoints", this.endpoints)
                .append("namespace", this.namespace)
                .append("leaseTtl", DurationStyle.SIMPLE.print(this.leaseTtl))
                .append("connectTimeout", DurationStyle.SIMPLE.print(this.connectTimeout))
                .append("requestTimeout", DurationStyle.SIMPLE.print(this.requestTimeout))
                .append("keepAliveTime", DurationStyle.SIMPLE.print(this.keepAliveTime))
                .append("keepAliveTimeout", DurationStyle.SIMPLE.print(this.keepAliveTimeout))
                .append("failFast", this.failFast)
                .append("username", this.username)
                .append("password", PropertyChecks.mask(this.password))
                .append("tls", this.tls)
                .toString();
        }
    }

    /**
     * How locks are kept in Redis. The connection is the application's own, as Spring Boot
     * configures it under spring.data.redis (Lettuce).
     */
    public static class Redis {

        /**
         * Prefix of every Redis key and channel the locks use, so that applications can share a
         * Redis. Must not contain '{' or '}'; namespaces never share locks, also when one is a
         * prefix of another.
         */
        private String namespace = "distributed-lock:";

        /**
         * TTL of the session and entry keys, renewed every third of it: the upper bound on how
         * long a crashed holder keeps others waiting, and on how long a holder cut off from Redis
         * believes it still holds its locks. At least 300ms, in whole milliseconds; a number
         * without a unit means seconds.
         */
        @DurationUnit(ChronoUnit.SECONDS)
        private Duration leaseTtl = Duration.ofSeconds(10);

        /**
         * Upper bound on each Redis call of the locks, whatever the connection's own command
         * timeout. An acquisition retries failed calls until its wait timeout; a release that
         * Redis does not confirm in time is retried in the background.
         */
        private Duration requestTimeout = Duration.ofSeconds(5);

        public String getNamespace() {
            return this.namespace;
        }

        public void setNamespace(String namespace) {
            String problem = RedisLockRegistry.namespaceProblem(namespace);
            if (problem != null) {
                throw new IllegalArgumentException("distributed-lock.redis.namespace " + problem);
            }
            this.namespace = namespace;
        }

        public Duration getLeaseTtl() {
            return this.leaseTtl;
        }

        public void setLeaseTtl(Duration leaseTtl) {
            PropertyChecks.check("distributed-lock.redis.lease-ttl", leaseTtl, RedisLockRegistry.leaseTtlProblem(leaseTtl));
            this.leaseTtl = leaseTtl;
        }

        public Duration getRequestTimeout() {
            return this.requestTimeout;
        }

        public void setRequestTimeout(Duration requestTimeout) {
            PropertyChecks.timeout("distributed-lock.redis.request-timeout", requestTimeout);
            this.requestTimeout = requestTimeout;
        }

        @Override
        public String toString() {
            return new ToStringCreator(this).append("namespace", this.namespace)
                .append("leaseTtl", DurationStyle.SIMPLE.print(this.leaseTtl))
                .append("requestTimeout", DurationStyle.SIMPLE.print(this.requestTimeout))
                .toString();
        }
    }

    /**
     * Connection to ZooKeeper and how locks are kept there. Used only when the application defines
     * no CuratorFramework bean of its own; the namespace and request timeout apply to either.
     */
    public static class Zookeeper {

        private static final String PREFIX = "distributed-lock.zookeeper.";

        /**
         * ZooKeeper servers to connect to, as a comma-separated list of host:port pairs,
         * optionally followed by a chroot path (zk1:2181,zk2:2181,zk3:2181/apps).
         */
        private String connectString = "127.0.0.1:2181";

        /**
         * Znode under which locks are kept, created when missing, so that applications can share
         * an ensemble. An absolute path without a trailing slash and without '#'; namespaces never
         * share locks, also when one is nested in another.
         */
        private String namespace = "/distributed-lock";

        /**
         * Session timeout to ask ZooKeeper for: the upper bound on how long a crashed holder keeps
         * others waiting; a holder cut off from the ZooKeeper leader believes it still holds its
         * locks for at most half of it. The server grants a value between 2 and 20 of its ticks
         * (4s to 40s by default); the granted one is shown in health. A bare number is
         * milliseconds, as in Curator.
         */
        private Duration sessionTimeout = Duration.ofSeconds(10);

        /**
         * Timeout for establishing a connection to a ZooKeeper server.
         */
        private Duration connectionTimeout = Duration.ofSeconds(5);

        /**
         * Upper bound on each ZooKeeper call of the locks. An acquisition retries failed calls
         * until its wait timeout; a release that ZooKeeper does not confirm in time is retried in
         * the background.
         */
        private Duration requestTimeout = Duration.ofSeconds(5);

        /**
         * User name for ZooKeeper digest authentication. Set together with the password; lock
         * nodes are then created readable and writable only by this user.
         */
        private @Nullable String username;

        /**
         * Password for ZooKeeper digest authentication. Set together with the user name.
         */
        private @Nullable String password;

        public String getConnectString() {
            return this.connectString;
        }

        public void setConnectString(String connectString) {
            String problem = connectStringProblem(connectString);
            if (problem != null) {
                throw new IllegalArgumentException(PREFIX + "connect-string " + problem + ", but is '" + connectString + "'");
            }
            this.connectString = connectString;
        }

        /** What ZooKeeper's client would refuse or misread, checked here so that the message names the property. */
        static @Nullable String connectStringProblem(@Nullable String connectString) {
            if (connectString == null || connectString.isBlank()) {
                return "must not be empty";
            }
            int chroot = connectString.indexOf('/');
            String servers = (chroot >= 0) ? connectString.substring(0, chroot) : connectString;
            if (chroot >= 0 && (connectString.length() == chroot + 1 || connectString.endsWith("/"))) {
                return "must not end with '/' (a chroot is a path such as /apps)";
            }
            for (String server : servers.split(",", -1)) {
                String hostAndPort = server.trim();
                if (hostAndPort.isEmpty() || hostAndPort.chars().anyMatch(Character::isWhitespace)) {
                    return "must be a comma-separated list of host:port pairs";
                }
                int colon = hostAndPort.lastIndexOf(':');
                if (colon >= 0 && !hostAndPort.endsWith("]")) {
                    String port = hostAndPort.substring(colon + 1);
                    if (colon == 0 || !port.matches("[0-9]{1,5}") || Integer.parseInt(port) < 1
                            || Integer.parseInt(port) > 65535) {
                        return "must be a comma-separated list of host:port pairs with ports from 1 to 65535";
                    }
                }
            }
            return null;
        }

        public String getNamespace() {
            return this.namespace;
        }

        public void setNamespace(String namespace) {
            String problem = ZookeeperLockRegistry.namespaceProblem(namespace);
            if (problem != null) {
                throw new IllegalArgumentException(PREFIX + "namespace " + problem);
            }
            this.namespace = namespace;
        }

        public Duration getSessionTimeout() {
            return this.sessionTimeout;
        }

        public void setSessionTimeout(Duration sessionTimeout) {
            checkMillis(PREFIX + "session-timeout", sessionTimeout);
            this.sessionTimeout = sessionTimeout;
        }

        public Duration getConnectionTimeout() {
            return this.connectionTimeout;
        }

        public void setConnectionTimeout(Duration connectionTimeout) {
            checkMillis(PREFIX + "connection-timeout", connectionTimeout);
            this.connectionTimeout = connectionTimeout;
        }

        public Duration getRequestTimeout() {
            return this.requestTimeout;
        }

        public void setRequestTimeout(Duration requestTimeout) {
            PropertyChecks.timeout(PREFIX + "request-timeout", requestTimeout);
            this.requestTimeout = requestTimeout;
        }

        public @Nullable String getUsername() {
            return this.username;
        }

        public void setUsername(@Nullable String username) {
            if (username != null && username.contains(":")) {
                throw new IllegalArgumentException(PREFIX + "username must not contain ':', but is '" + username + "'");
            }
            this.username = username;
        }

        public @Nullable String getPassword() {
            return this.password;
        }

        public void setPassword(@Nullable String password) {
            this.password = password;
        }

        /** Curator takes these timeouts as whole milliseconds in an int. */
        private static void checkMillis(String property, Duration value) {
            PropertyChecks.positive(property, value);
            PropertyChecks.check(property, value,
                    (value.compareTo(Duration.ofMillis(Integer.MAX_VALUE)) > 0) ? "must be at most 24 days" : null);
            long nanos = value.toNanos();
            if (nanos % 1_000_000 != 0) {
                // Printed exactly: the usual millisecond form would hide what is wrong.
                String exact = (nanos % 1_000 == 0) ? (nanos / 1_000) + "us" : nanos + "ns";
                throw new IllegalArgumentException(
                        property + " must be a whole number of milliseconds, but is '" + exact + "'");
            }
        }

        @Override
        public String toString() {
            return new ToStringCreator(this).append("connectString", this.connectString)
                .append("namespace", this.namespace)
                .append("sessionTimeout", DurationStyle.SIMPLE.print(this.sessionTimeout))
                .append("connectionTimeout", DurationStyle.SIMPLE.print(this.connectionTimeout))
                .append("requestTimeout", DurationStyle.SIMPLE.print(this.requestTimeout))
                .append("username", this.username)
                .append("password", PropertyChecks.mask(this.password))
                .toString();
        }
    }

    /**
     * How locks are kept in an SQL database (PostgreSQL, MySQL, MariaDB or H2). The connections are
     * the application's own, from its DataSource as Spring Boot configures it under
     * spring.datasource.
     */
    public static class Jdbc {

        private static final String PREFIX = "distributed-lock.jdbc.";

        /**
         * Prefix of the lock tables (<prefix>SESSION, <prefix>LOCK_KEY and <prefix>ENTRY), so that
         * applications can share a database: letters, digits and underscores, optionally after a
         * schema name and a dot (locks.DISTRIBUTED_LOCK_), at most 40 characters.
         */
        private String tablePrefix = "DISTRIBUTED_LOCK_";

        /**
         * TTL of the session row, whose expiry the database computes with its own clock and which
         * is renewed every third of it: the upper bound on how long a crashed holder keeps others
         * waiting, and on how long a holder cut off from the database believes it still holds its
         * locks. At least 1s, in whole milliseconds; a number without a unit means seconds.
         */
        @DurationUnit(ChronoUnit.SECONDS)
        private Duration leaseTtl = Duration.ofSeconds(10);

        /**
         * How often a waiting thread reads its lock's queue again at the least, varied by up to a
         * quarter either way. Defaults to 1s on PostgreSQL, where LISTEN/NOTIFY wakes waiters as
         * soon as a lock is released, and to 50ms on the other databases, where polling is how
         * waiters learn of a release in another instance.
         */
        private @Nullable Duration pollInterval;

        /**
         * Upper bound on each database call of the locks, including the wait for a connection of
         * the pool, whatever the pool's own connection timeout. An acquisition retries failed
         * calls until its wait timeout; a release that the database does not confirm in time is
         * retried in the background.
         */
        private Duration requestTimeout = Duration.ofSeconds(5);

        /**
         * When to create the lock tables at start-up, from the schema script of the database in
         * the jar (io/github/distlock/jdbc/schema-*.sql): 'always'; 'embedded' only for an
         * embedded database (H2 or HSQLDB in memory, Derby); or 'never', when the tables come from
         * a migration tool such as Flyway or Liquibase or from an administrator. The script only
         * creates what is missing; with 'always', start-up fails if it cannot.
         */
        private InitializeSchema initializeSchema = InitializeSchema.EMBEDDED;

        public String getTablePrefix() {
            return this.tablePrefix;
        }

        public void setTablePrefix(String tablePrefix) {
            String problem = JdbcLockRegistry.tablePrefixProblem(tablePrefix);
            if (problem != null) {
                throw new IllegalArgumentException(PREFIX + "table-prefix " + problem);
            }
            this.tablePrefix = tablePrefix;
        }

        public Duration getLeaseTtl() {
            return this.leaseTtl;
        }

        public void setLeaseTtl(Duration leaseTtl) {
            PropertyChecks.check(PREFIX + "lease-ttl", leaseTtl, JdbcLockRegistry.leaseTtlProblem(leaseTtl));
            this.leaseTtl = leaseTtl;
        }

        public @Nullable Duration getPollInterval() {
            return this.pollInterval;
        }

        public void setPollInterval(@Nullable Duration pollInterval) {
            if (pollInterval != null) {
                PropertyChecks.check(PREFIX + "poll-interval", pollInterval,
                        JdbcLockRegistry.pollIntervalProblem(pollInterval));
            }
            this.pollInterval = pollInterval;
        }

        public Duration getRequestTimeout() {
            return this.requestTimeout;
        }

        public void setRequestTimeout(Duration requestTimeout) {
            PropertyChecks.timeout(PREFIX + "request-timeout", requestTimeout);
            this.requestTimeout = requestTimeout;
        }

        public InitializeSchema getInitializeSchema() {
            return this.initializeSchema;
        }

        public void setInitializeSchema(InitializeSchema initializeSchema) {
            this.initializeSchema = initializeSchema;
        }

        @Override
        public String toString() {
            return new ToStringCreator(this).append("tablePrefix", this.tablePrefix)
                .append("leaseTtl", DurationStyle.SIMPLE.print(this.leaseTtl))
                .append("pollInterval", (this.pollInterval != null) ? DurationStyle.SIMPLE.print(this.pollInterval) : null)
                .append("requestTimeout", DurationStyle.SIMPLE.print(this.requestTimeout))
                .append("initializeSchema", this.initializeSchema)
                .toString();
        }

        /** When the lock tables are created at start-up. */
        public enum InitializeSchema {

            /** Always: the tables that are missing are created, on any database. */
            ALWAYS,

            /** Only on an embedded database (H2 or HSQLDB in memory, Derby). */
            EMBEDDED,

            /** Never: the tables come from a migration tool or an administrator. */
            NEVER

        }
    }

    /** TLS files for https:// endpoints. */
    public static class Tls {

        /**
         * PEM file with the certificates of the authorities that issued the etcd members'
         * certificates. Defaults to the JVM's trusted authorities.
         */
        private @Nullable Path caFile;

        /**
         * PEM file with the client certificate chain, for etcd members that require client
         * certificates. Set together with the key file.
         */
        private @Nullable Path certFile;

        /**
         * PEM file with the private key of the client certificate, in PKCS#8 format. Set together
         * with the certificate file.
         */
        private @Nullable Path keyFile;

        /**
         * Password of the private key, if the key file is encrypted.
         */
        private @Nullable String keyPassword;

        public @Nullable Path getCaFile() {
            return this.caFile;
        }

        public void setCaFile(@Nullable Path caFile) {
            this.caFile = caFile;
        }

        public @Nullable Path getCertFile() {
            return this.certFile;
        }

        public void setCertFile(@Nullable Path certFile) {
            this.certFile = certFile;
        }

        public @Nullable Path getKeyFile() {
            return this.keyFile;
        }

        public void setKeyFile(@Nullable Path keyFile) {
            this.keyFile = keyFile;
        }

        public @Nullable String getKeyPassword() {
            return this.keyPassword;
        }

        public void setKeyPassword(@Nullable String keyPassword) {
            this.keyPassword = keyPassword;
        }

        @Override
        public String toString() {
            return new ToStringCreator(this).append("caFile", this.caFile)
                .append("certFile", this.certFile)
                .append("keyFile", this.keyFile)
                .append("keyPassword", PropertyChecks.mask(this.keyPassword))
                .toString();
        }
    }
}
