package io.github.distlock.testsupport;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.options.GetOption;
import io.github.distlock.FencedLock;
import io.github.distlock.LocalHandoff;
import io.github.distlock.LockAcquisitionException;
import io.github.distlock.LockRegistry;
import io.github.distlock.autoconfigure.DistributedLockProperties;
import io.github.distlock.core.CoreLockRegistry;
import io.github.distlock.etcd.EtcdLockRegistry;
import io.github.distlock.jdbc.JdbcLockRegistry;
import io.github.distlock.jdbc.JdbcSchema;
import io.github.distlock.redis.RedisLockRegistry;
import io.github.distlock.zookeeper.ZookeeperLockRegistry;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.internal.HostAndPort;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import io.lettuce.core.resource.MappingSocketAddressResolver;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.jspecify.annotations.Nullable;

/**
 * One process's view of a lock store for the multi-process and fault tests: a client, the
 * registries built on it, a fenced resource and a count of a key's entries, the same for every
 * store. A spec string ({@code etcd=<endpoints,comma-separated>}, {@code redis=<uri>} (a Lettuce
 * URI, {@code redis-sentinel://host:port#master} for a primary found through a Sentinel, optionally
 * followed by the proxies the client must connect through, see {@link #redis(String, Map)}) or
 * {@code zookeeper=<connect string>}) names the
 * store, so that a child JVM can open the store its test uses ({@code jdbc=<url>|<user>|<password>}
 * for a database server, see {@link #jdbc}). For ZooKeeper
 * ({@code zookeeper=<connect string>}) each registry gets a Curator client of its own whose session
 * timeout is the registry's TTL.
 */
public abstract class TestStore implements AutoCloseable {

    private final String spec;

    private final List<AutoCloseable> registries = new ArrayList<>();

    private TestStore(String spec) {
        this.spec = spec;
    }

    /**
     * @param spec {@code etcd=<endpoints>} or {@code redis=<uri>}
     * @return a store with its own client
     */
    public static TestStore open(String spec) {
        int separator = spec.indexOf('=');
        String kind = (separator > 0) ? spec.substring(0, separator) : spec;
        String address = spec.substring(separator + 1);
        return switch (kind) {
            case "etcd" -> new Etcd(spec, Arrays.asList(address.split(",")));
            case "redis" -> new Redis(spec, address);
            case "zookeeper" -> new Zookeeper(spec, address);
            case "jdbc" -> new Jdbc(spec, address);
            default -> throw new IllegalArgumentException("Unknown store spec '" + spec + "'");
        };
    }

    /**
     * @param server a database server
     * @return the spec of the JDBC store on it
     */
    public static String jdbc(DatabaseServer server) {
        return "jdbc=" + server.jdbcUrl() + "|" + server.username() + "|" + server.password();
    }

    /**
     * The spec of a Redis store whose client reaches every server through a proxy: each address the
     * client would connect to ({@code host:port} of a server or a Sentinel, also one a Sentinel names
     * later, after a failover) is replaced by its proxy's. The client is otherwise the one a user
     * builds; only its {@link ClientResources} map addresses ({@link MappingSocketAddressResolver}).
     * An address with no proxy fails the connection, so that no traffic can go around the proxies.
     * @param uri a Lettuce URI with the servers' own addresses
     * @param proxies the proxy's {@code host:port} by the {@code host:port} it stands in front of
     * @return {@code redis=<uri>|<address>><proxy>,...}
     */
    public static String redis(String uri, Map<String, String> proxies) {
        StringBuilder spec = new StringBuilder("redis=").append(uri);
        String separator = "|";
        for (Map.Entry<String, String> proxy : proxies.entrySet()) {
            spec.append(separator).append(proxy.getKey()).append('>').append(proxy.getValue());
            separator = ",";
        }
        return spec.toString();
    }

    /** @return the spec to pass to a child JVM */
    public String spec() {
        return this.spec;
    }

    /**
     * Builds a registry, closed with this store.
     * @param namespace the namespace, in the store's own form (see {@link #namespace(String)})
     * @param ttl the lease TTL
     * @param owner the owner identity
     * @return the registry
     */
    public CoreLockRegistry<?> registry(String namespace, Duration ttl, String owner) {
        return registry(namespace, ttl, owner, LocalHandoff.DEFAULT);
    }

    /**
     * Builds a registry with local passes and linger as given, closed with this store.
     * @param namespace the namespace, in the store's own form (see {@link #namespace(String)})
     * @param ttl the lease TTL
     * @param owner the owner identity
     * @param handoff the pass window and the linger
     * @return the registry
     */
    public CoreLockRegistry<?> registry(String namespace, Duration ttl, String owner, LocalHandoff handoff) {
        CoreLockRegistry<?> registry = newRegistry(namespace, ttl, owner, handoff);
        this.registries.add((AutoCloseable) registry);
        return registry;
    }

    /**
     * Takes and releases a lock on a key of its own until that works, for up to a minute: the
     * first calls of a JVM just started (channel, session, class loading) can take longer than
     * the request timeout on a loaded machine. A child JVM does this before it says it is ready,
     * so that its first acquisition under test meets a warm client.
     * @param registry a registry of this store
     * @param key a key no test uses
     * @throws InterruptedException if interrupted while trying
     */
    public static void warmUp(LockRegistry registry, String key) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(1);
        FencedLock lock = registry.obtain(key, true);
        while (true) {
            try {
                if (lock.tryLock(10, TimeUnit.SECONDS)) {
                    lock.unlock();
                    return;
                }
            }
            catch (LockAcquisitionException ex) {
                if (System.nanoTime() - deadline >= 0) {
                    throw ex;
                }
            }
            if (System.nanoTime() - deadline >= 0) {
                throw new IllegalStateException("Could not take the warm-up lock '" + key + "' within a minute");
            }
        }
    }

    /**
     * @param id a unique word
     * @return a namespace for this store that contains it
     */
    public abstract String namespace(String id);

    /**
     * @param name a unique name
     * @return a fenced resource in this store
     */
    public abstract FencedResource resource(String name);

    /**
     * @param namespace the registries' namespace
     * @param key a lock key
     * @return how many entries (holder and waiters, live or not yet removed) the key has
     */
    public abstract long entries(String namespace, String key);

    protected abstract CoreLockRegistry<?> newRegistry(String namespace, Duration ttl, String owner,
            LocalHandoff handoff);

    protected abstract void closeClient();

    /** Closes the registries (which releases their locks), then the client. */
    @Override
    public void close() {
        for (AutoCloseable registry : this.registries) {
            try {
                registry.close();
            }
            catch (Exception ex) {
                throw new IllegalStateException("Could not close " + registry, ex);
            }
        }
        closeClient();
    }

    private static final class Etcd extends TestStore {

        private final List<String> endpoints;

        private final Client client;

        Etcd(String spec, List<String> endpoints) {
            super(spec);
            this.endpoints = endpoints;
            // gRPC keep-alives as the starter sets them: a connection that went silent is given up in seconds.
            DistributedLockProperties.Etcd defaults = new DistributedLockProperties().getEtcd();
            this.client = Client.builder().endpoints(endpoints.toArray(String[]::new))
                .keepaliveTime(defaults.getKeepAliveTime()).keepaliveTimeout(defaults.getKeepAliveTimeout())
                .keepaliveWithoutCalls(true).build();
        }

        @Override
        public String namespace(String id) {
            return "/" + id + "/";
        }

        @Override
        public FencedResource resource(String name) {
            return new EtcdFencedResource(this.client, "/" + name);
        }

        @Override
        public long entries(String namespace, String key) {
            try {
                // The root of a key as EtcdKeyspace writes it: no test key here needs escaping.
                String root = namespace + "#" + key + "/";
                return this.client.getKVClient()
                    .get(io.etcd.jetcd.ByteSequence.from(root, java.nio.charset.StandardCharsets.UTF_8),
                            GetOption.builder().isPrefix(true).withCountOnly(true).build())
                    .get(10, TimeUnit.SECONDS)
                    .getCount();
            }
            catch (Exception ex) {
                throw new IllegalStateException("Could not count the entries of '" + key + "'", ex);
            }
        }

        @Override
        protected CoreLockRegistry<?> newRegistry(String namespace, Duration ttl, String owner, LocalHandoff handoff) {
            return EtcdLockRegistry.builder(this.client).namespace(namespace).leaseTtl(ttl).ownerIdentity(owner)
                .endpoints(this.endpoints).localHandoff(handoff).build();
        }

        @Override
        protected void closeClient() {
            this.client.close();
        }
    }

    private static final class Redis extends TestStore {

        private final String uri;

        /** Resources of the client's own when it connects through proxies, else {@code null} (Lettuce's shared ones). */
        private final ClientResources resources;

        private final RedisClient client;

        /**
         * Opened on first use: through a Sentinel ({@code redis-sentinel://}) a connection fails while
         * the primary is down or failing over, and a worker JVM that starts then needs only the registry,
         * which connects (and retries) by itself.
         */
        private StatefulRedisConnection<String, String> raw;

        /** @param address {@code <uri>} or {@code <uri>|<address>><proxy>,...} (see {@link TestStore#redis}) */
        Redis(String spec, String address) {
            super(spec);
            int bar = address.indexOf('|');
            this.uri = (bar < 0) ? address : address.substring(0, bar);
            if (bar < 0) {
                this.resources = null;
                this.client = RedisClient.create(this.uri);
                return;
            }
            Map<HostAndPort, HostAndPort> proxies = new LinkedHashMap<>();
            for (String pair : address.substring(bar + 1).split(",")) {
                String[] addresses = pair.split(">", -1);
                if (addresses.length != 2) {
                    throw new IllegalArgumentException("A Redis proxy is <host:port>><host:port>, not '" + pair + "'");
                }
                proxies.put(HostAndPort.parse(addresses[0]), HostAndPort.parse(addresses[1]));
            }
            // Lettuce resolves through this every address it connects to: the URI's server or Sentinels, the
            // primary a Sentinel names (on every connect and reconnect, so also after a failover).
            Function<HostAndPort, HostAndPort> throughProxy = (server) -> {
                HostAndPort proxy = proxies.get(server);
                if (proxy == null) {
                    throw new IllegalStateException("no proxy for Redis at " + server + " (proxied: "
                            + proxies.keySet() + "): the client would go around the proxies");
                }
                return proxy;
            };
            this.resources = DefaultClientResources.builder()
                .socketAddressResolver(MappingSocketAddressResolver.create(throughProxy))
                .build();
            this.client = RedisClient.create(this.resources, this.uri);
        }

        private synchronized StatefulRedisConnection<String, String> raw() {
            if (this.raw == null) {
                this.raw = this.client.connect();
            }
            return this.raw;
        }

        @Override
        public String namespace(String id) {
            return id + ":";
        }

        @Override
        public FencedResource resource(String name) {
            return new RedisFencedResource(raw().sync(), name);
        }

        @Override
        public long entries(String namespace, String key) {
            // The queue as RedisKeyspace names it: no test key here needs escaping.
            return raw().sync().zcard(namespace + "{" + key + "}:q");
        }

        @Override
        protected CoreLockRegistry<?> newRegistry(String namespace, Duration ttl, String owner, LocalHandoff handoff) {
            return RedisLockRegistry.builder(this.client).namespace(namespace).leaseTtl(ttl).ownerIdentity(owner)
                .description("Redis at " + this.uri).localHandoff(handoff).build();
        }

        @Override
        protected synchronized void closeClient() {
            if (this.raw != null) {
                this.raw.close();
            }
            this.client.shutdown();
            if (this.resources != null) {
                this.resources.shutdown();
            }
        }
    }

    private static final class Zookeeper extends TestStore {

        private final String connectString;

        /** For resources and counts only, so opened on first use: a worker JVM needs neither. */
        private @Nullable CuratorFramework client;

        private final List<CuratorFramework> registryClients = new ArrayList<>();

        Zookeeper(String spec, String connectString) {
            super(spec);
            this.connectString = connectString;
        }

        private synchronized CuratorFramework client() {
            if (this.client == null) {
                this.client = startedClient(this.connectString, 10_000);
            }
            return this.client;
        }

        private static CuratorFramework startedClient(String connectString, int sessionTimeoutMillis) {
            CuratorFramework curator = CuratorFrameworkFactory.newClient(connectString, sessionTimeoutMillis, 5_000,
                    new ExponentialBackoffRetry(100, 3));
            curator.start();
            try {
                if (!curator.blockUntilConnected(30, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("Could not connect to ZooKeeper at " + connectString);
                }
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(ex);
            }
            return curator;
        }

        @Override
        public String namespace(String id) {
            return "/" + id;
        }

        @Override
        public FencedResource resource(String name) {
            return new ZookeeperFencedResource(client(), "/" + name);
        }

        @Override
        public long entries(String namespace, String key) {
            // The lock node as ZookeeperKeyspace names it: no test key here needs escaping.
            String lockNode = namespace + "/#" + key;
            try {
                CuratorFramework curator = client();
                return (curator.checkExists().forPath(lockNode) == null) ? 0
                        : curator.getChildren().forPath(lockNode).size();
            }
            catch (Exception ex) {
                throw new IllegalStateException("Could not count the entries of '" + key + "'", ex);
            }
        }

        @Override
        protected CoreLockRegistry<?> newRegistry(String namespace, Duration ttl, String owner, LocalHandoff handoff) {
            CuratorFramework registryClient = startedClient(this.connectString, (int) ttl.toMillis());
            this.registryClients.add(registryClient);
            return ZookeeperLockRegistry.builder(registryClient).namespace(namespace).ownerIdentity(owner)
                .description("ZooKeeper at " + this.connectString).localHandoff(handoff).build();
        }

        @Override
        protected void closeClient() {
            this.registryClients.forEach(CuratorFramework::close);
            synchronized (this) {
                if (this.client != null) {
                    this.client.close();
                }
            }
        }
    }

    private static final class Jdbc extends TestStore {

        private final String url;

        private final HikariDataSource pool;

        private final List<HikariDataSource> registryPools = new ArrayList<>();

        private final String user;

        private final String password;

        Jdbc(String spec, String address) {
            super(spec);
            String[] parts = address.split("\\|", -1);
            if (parts.length != 3) {
                throw new IllegalArgumentException("A JDBC store spec is jdbc=<url>|<user>|<password>");
            }
            this.url = parts[0];
            this.user = parts[1];
            this.password = parts[2];
            this.pool = pool("test-store");
        }

        private HikariDataSource pool(String name) {
            HikariConfig config = new HikariConfig();
            config.setJdbcUrl(this.url);
            config.setUsername(this.user);
            config.setPassword(this.password);
            config.setPoolName(name);
            config.setMaximumPoolSize(10);
            config.setMinimumIdle(0);
            config.setConnectionTimeout(3_000);
            // Starts without a connection, so that a child JVM started while its database is down waits for it
            // (see initializeSchema) instead of failing at once.
            config.setInitializationFailTimeout(-1);
            return new HikariDataSource(config);
        }

        @Override
        public String namespace(String id) {
            // A table prefix: an identifier of its own per id.
            String prefix = "T" + Integer.toHexString(id.hashCode()).toUpperCase(java.util.Locale.ROOT) + "_";
            JdbcSchema.initialize(this.pool, prefix);
            return prefix;
        }

        @Override
        public FencedResource resource(String name) {
            return new JdbcFencedResource(this.pool, name);
        }

        @Override
        public long entries(String namespace, String key) {
            // LOCK_ID as JdbcTables computes it: no test key here needs escaping.
            try (java.sql.Connection connection = this.pool.getConnection();
                    java.sql.PreparedStatement count = connection.prepareStatement(
                            "SELECT COUNT(*) FROM " + namespace + "ENTRY WHERE LOCK_ID = ?")) {
                count.setString(1, java.util.HexFormat.of().formatHex(java.security.MessageDigest
                    .getInstance("SHA-256").digest(key.getBytes(java.nio.charset.StandardCharsets.UTF_8))));
                try (java.sql.ResultSet rows = count.executeQuery()) {
                    rows.next();
                    return rows.getLong(1);
                }
            }
            catch (Exception ex) {
                throw new IllegalStateException("Could not count the entries of '" + key + "'", ex);
            }
        }

        @Override
        protected CoreLockRegistry<?> newRegistry(String namespace, Duration ttl, String owner, LocalHandoff handoff) {
            HikariDataSource registryPool = pool(owner);
            this.registryPools.add(registryPool);
            initializeSchema(registryPool, namespace);
            return JdbcLockRegistry.builder(registryPool).tablePrefix(namespace).leaseTtl(ttl).ownerIdentity(owner)
                .description("the database at " + this.url).localHandoff(handoff).build();
        }

        /**
         * Creates the tables, trying again for up to three minutes: a child JVM may start while a fault test has its
         * database down or restarting (a nemesis run replaces a killed worker whenever the plan says, and its
         * schedule kept PostgreSQL unavailable for 61 s once, which outlasted the one minute this waited before).
         */
        private static void initializeSchema(HikariDataSource pool, String namespace) {
            long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(3);
            while (true) {
                try {
                    JdbcSchema.initialize(pool, namespace);
                    return;
                }
                catch (IllegalStateException ex) {
                    if (System.nanoTime() - deadline >= 0) {
                        throw ex;
                    }
                }
                try {
                    Thread.sleep(200);
                }
                catch (InterruptedException ex) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("Interrupted while creating the lock tables", ex);
                }
            }
        }

        @Override
        protected void closeClient() {
            this.registryPools.forEach(HikariDataSource::close);
            this.pool.close();
        }
    }
}
