package io.github.distlock.nemesis;

import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

import io.github.distlock.nemesis.FaultPlan.Action;
import io.github.distlock.nemesis.FaultPlan.Fault;
import io.github.distlock.nemesis.HistoryEvent.FaultKind;
import io.github.distlock.testsupport.RedisServer;
import io.github.distlock.testsupport.TestStore;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.sentinel.api.StatefulRedisSentinelConnection;
import io.lettuce.core.sentinel.api.sync.RedisSentinelCommands;

/**
 * Redis under a nemesis run: two servers, a primary and its replica, watched by one Sentinel;
 * the workers find the primary through the Sentinel ({@code redis-sentinel://}). Each worker slot
 * reaches each of the three (both servers and the Sentinel) through a proxy of its own: the
 * worker's Lettuce client maps every address it connects to, the one the Sentinel names too, to
 * its slot's proxy for it ({@link TestStore#redis}), so that network faults hit all of a worker's
 * traffic whichever server is primary. The servers keep no data on disk (a cache style Redis, and
 * what makes Sentinel's failover lossy): a killed server always restarts empty.
 *
 * <p>Faults, one member at a time: a server killed (the primary: Sentinel promotes the replica;
 * the replica: the primary serves on) and restarted at the heal, a primary only once the Sentinel
 * failed over; a server paused and resumed, a primary that the Sentinel took for down only once it
 * failed over; the primary restarted at once while the Sentinel waits, so that it stays primary
 * empty and its replica copies the emptiness; entries deleted behind the library's back. The
 * heals keep the run free of split brain (two primaries serving at once), which no fence can
 * order (see {@link #awaitFailoverFrom}). Every heal waits until
 * the topology is whole again (the Sentinel settled on a primary, the other server its replica
 * with the link up, the Sentinel seeing that replica), so the next fault meets a store that can
 * fail over, and the recovery rule measures the clients, not the store.
 *
 * <p>A restarted or resumed server that is not the Sentinel's primary is made its replica at the
 * heal as an operator's configuration would ({@code REPLICAOF}), and its clients are disconnected
 * as the Sentinel does when it reconfigures a server ({@code CLIENT KILL}), so that they ask the
 * Sentinel again; the Sentinel alone would do the same only some seconds later.
 */
final class RedisNemesisStore implements NemesisStore {

    /**
     * How long Redis takes to serve the clients again after a heal. Sentinel's failover (down-after
     * 1 s, then a promotion within about 1-2 s) happens inside the fault window, since the heal waits
     * for the topology to be whole. What is left for the clients: a call that went to a server just
     * before it was paused or killed fails only when the library's request timeout (5 s by default)
     * ends, and its next connection goes where the Sentinel points; a pair of connections that fell
     * silent is replaced within a third of the TTL, less than that timeout.
     */
    static final Duration ELECTION = Duration.ofSeconds(5);

    static final String NAMESPACE = "nemesis:";

    static final String MASTER = "distlock-nemesis";

    /** How long the Sentinel waits for a primary's answer before it fails over. */
    static final Duration DOWN_AFTER = Duration.ofSeconds(1);

    /** The Sentinel's down-after while a primary restarts empty: longer than any restart takes. */
    static final Duration RESTART_DOWN_AFTER = Duration.ofSeconds(30);

    /** How long a heal waits for the Sentinel to fail over a killed or paused primary. */
    private static final Duration FAILOVER_TIMEOUT = Duration.ofSeconds(30);

    /** How long a heal waits for the topology to be whole, and a delete for a primary to take it. */
    private static final Duration SETTLE_TIMEOUT = Duration.ofSeconds(60);

    /** Bounds each call to the Sentinel, which no fault hits. */
    private static final Duration SENTINEL_TIMEOUT = Duration.ofSeconds(2);

    /**
     * Deletes a scope of the namespace's lock entries, each entry as a whole: its id in the queue and
     * its liveness key (not the removal markers {@code <entry key>:r}, nor the fence counters).
     * KEYS: none. ARGV: namespace, scope (0 every entry, 1 the hot key's, 2 the hot key's oldest
     * live entry, its holder's), the hot key. Returns how many entries it deleted. {@code KEYS} is
     * fine here: a test server holds a few hundred names.
     */
    private static final String DELETE = """
            local namespace, scope, hot = ARGV[1], tonumber(ARGV[2]), ARGV[3]
            local base = namespace .. '{' .. (scope == 0 and '*' or hot) .. '}'
            local deleted = 0
            if scope == 2 then
              local queue, prefix = base .. ':q', base .. ':e:'
              for _, id in ipairs(redis.call('ZRANGE', queue, 0, -1)) do
                if redis.call('EXISTS', prefix .. id) == 1 then
                  redis.call('ZREM', queue, id)
                  redis.call('DEL', prefix .. id)
                  return 1
                end
              end
              return 0
            end
            for _, queue in ipairs(redis.call('KEYS', base .. ':q')) do
              deleted = deleted + redis.call('ZCARD', queue)
              redis.call('DEL', queue)
            end
            for _, entry in ipairs(redis.call('KEYS', base .. ':e:*')) do
              if string.sub(entry, -2) ~= ':r' then redis.call('DEL', entry) end
            end
            return deleted
            """;

    /**
     * What the namespace still holds: {@code <entries>|<sessions>|<some names>}, where entries are
     * the distinct entry ids in queues or with a liveness key. ARGV: namespace.
     */
    private static final String OBSERVE = """
            local namespace = ARGV[1]
            local ids, entries, names = {}, 0, {}
            local function note(id, name)
              if not ids[id] then
                ids[id] = true
                entries = entries + 1
                if #names < 10 then names[#names + 1] = name end
              end
            end
            for _, queue in ipairs(redis.call('KEYS', namespace .. '{*}:q')) do
              for _, id in ipairs(redis.call('ZRANGE', queue, 0, -1)) do note(id, queue .. ' ' .. id) end
            end
            for _, entry in ipairs(redis.call('KEYS', namespace .. '{*}:e:*')) do
              if string.sub(entry, -2) ~= ':r' then
                note(string.match(entry, ':e:(.*)$'), entry)
              end
            end
            local sessions = redis.call('KEYS', namespace .. 'session:*')
            for i = 1, math.min(#sessions, 10) do names[#names + 1] = sessions[i] end
            return entries .. '|' .. #sessions .. '|' .. table.concat(names, ', ')
            """;

    /** The servers by member index; which one is primary changes with failovers. */
    private final List<RedisServer> servers;

    private final RedisServer sentinel;

    private final RedisClient sentinelClient;

    private final StatefulRedisSentinelConnection<String, String> sentinelConnection;

    /**
     * Held while a server is signalled (killed, paused, resumed, restarted) and while entries are
     * deleted, so that a delete is never sent to a server that is paused: Redis would run it at the
     * resume, after its fault window ended.
     */
    private final ReentrantLock signals = new ReentrantLock();

    /** The member that is paused, or -1; guarded by {@link #signals}. */
    private int paused = -1;

    private RedisNemesisStore(List<RedisServer> servers, RedisServer sentinel) {
        this.servers = servers;
        this.sentinel = sentinel;
        this.sentinelClient = RedisClient.create();
        this.sentinelConnection = this.sentinelClient.connectSentinel(RedisURI.builder()
            .withHost(sentinel.host()).withPort(sentinel.port()).withTimeout(SENTINEL_TIMEOUT).build());
    }

    static RedisNemesisStore start() {
        RedisServer primary = null;
        RedisServer replica = null;
        RedisServer sentinel = null;
        try {
            primary = RedisServer.start(false);
            // Both start as primaries, so that a restart of either comes back as an empty primary until the heal
            // makes it the replica of whichever server the Sentinel chose meanwhile (a fixed --replicaof could name
            // the replica of a failover, a loop).
            replica = RedisServer.start(false);
            replica.command("REPLICAOF", primary.host(), Integer.toString(primary.port()));
            sentinel = RedisServer.startSentinel(primary, MASTER, DOWN_AFTER);
            RedisNemesisStore store = new RedisNemesisStore(List.of(primary, replica), sentinel);
            store.awaitWhole("the start");
            return store;
        }
        catch (RuntimeException ex) {
            for (RedisServer server : new RedisServer[] { sentinel, replica, primary }) {
                if (server != null) {
                    server.close();
                }
            }
            throw ex;
        }
    }

    @Override
    public Type type() {
        return Type.REDIS;
    }

    @Override
    public int members() {
        return this.servers.size();
    }

    /** Both servers, by member index, then the Sentinel: every address a worker's client may connect to. */
    @Override
    public List<String> addresses() {
        List<String> addresses = new ArrayList<>();
        for (RedisServer server : this.servers) {
            addresses.add(server.host() + ":" + server.port());
        }
        addresses.add(this.sentinel.host() + ":" + this.sentinel.port());
        return addresses;
    }

    /**
     * The Sentinel URI names the Sentinel's own address, and the spec maps each of {@link #addresses()}
     * to the proxy in its place: the Sentinel names the servers by their own addresses, which the
     * worker's client then maps too.
     */
    @Override
    public String spec(List<String> addresses) {
        List<String> own = addresses();
        if (addresses.size() != own.size()) {
            throw new IllegalArgumentException("expected a proxy for each of " + own + ", got " + addresses);
        }
        Map<String, String> proxies = new LinkedHashMap<>();
        for (int i = 0; i < own.size(); i++) {
            proxies.put(own.get(i), addresses.get(i));
        }
        return TestStore.redis("redis-sentinel://" + this.sentinel.host() + ":" + this.sentinel.port() + "#" + MASTER,
                proxies);
    }

    @Override
    public String namespace() {
        return NAMESPACE;
    }

    @Override
    public Map<Action, Integer> weights() {
        return Map.of(Action.KILL_MEMBER, 20, Action.PAUSE_MEMBER, 20, Action.RESTART_EMPTY, 10,
                Action.DELETE_ENTRIES, 20, Action.NETWORK_WORKER, 15);
    }

    @Override
    public Bounds bounds(Duration ttl) {
        // waitOverrun: FencedLock documents timeout + 1 s (a store attempt's floor); 0.5 s more for scheduling on a
        // machine where the servers, the Sentinel and the worker JVMs share few cores.
        Duration waitOverrun = Duration.ofMillis(1_500);
        // lossReport: an entry is lost when Redis says it is gone (the next renewal, every TTL/3, or a '-' message
        // when another entry reaches the head) or one TTL after the send of its last acknowledged renewal. Another
        // process can be granted the key only on a server without the entry: a promoted replica, an emptied
        // primary, after a delete. The holder's renewals acknowledged before that were sent before it, so the TTL
        // bounds the report; the one exception is a paused old primary, which acknowledges renewals from its resume
        // until the heal demotes it and disconnects its clients moments later, and a pause outlasts the failover by
        // less than a TTL. A worker cut off by a network fault (no data lost) loses its entry only when its liveness
        // key expires, one TTL after the last renewal Redis applied; every renewal the holder saw acknowledged was
        // applied, and sent before that, so the holder's own deadline falls before another process can be granted
        // the key, and the same bound holds. Bytes delayed, answers held (one-way) or requests held in a black hole
        // and delivered at the heal only make Redis keep the entry longer than its holder counts on, never shorter.
        // 1 s more for the reconnect through the Sentinel and scheduling.
        Duration lossReport = ttl.plusSeconds(1);
        // fairnessSlack: a request is recorded before the call sends its enqueue script (after a loss, a session's
        // SET first): one or two round trips to a local Redis, but on a loaded machine, as for etcd.
        Duration fairnessSlack = Duration.ofMillis(250);
        // Fences are the larger of the key's counter + 1 and the primary's clock in microseconds (RedisKeyspace):
        // a counter that a failover or an empty restart lost, or that lags on a promoted replica, still gives fences
        // above every one issued before, as G12 promises for Redis. Every server here runs on one host, one clock.
        return new Bounds(ttl, ELECTION, waitOverrun, lossReport, fairnessSlack, true);
    }

    @Override
    public StoreFault fault(Fault fault) {
        return switch (fault.action()) {
            case KILL_MEMBER, PAUSE_MEMBER, RESTART_EMPTY -> memberFault(fault);
            case DELETE_ENTRIES -> {
                String[] scopes = { "every entry", "the entries of '" + NemesisRunner.KEYS.get(0) + "'",
                        "the oldest live entry of '" + NemesisRunner.KEYS.get(0) + "'" };
                // In the heal, on a heal thread: it may wait for a paused primary's heal or a failover.
                yield new StoreFault(FaultKind.DELETE_ENTRIES, scopes[fault.target()], true, () -> {
                }, () -> System.out.println("nemesis: deleted " + deleteEntries(fault.target()) + " entries"));
            }
            default -> throw new IllegalArgumentException("Redis has no fault " + fault.action());
        };
    }

    private StoreFault memberFault(Fault fault) {
        int primary = primaryIndex();
        // An empty restart is about the primary: a replica restarts empty under every kill.
        boolean onPrimary = fault.leader() || fault.action() == Action.RESTART_EMPTY;
        int index = onPrimary ? primary : fault.target();
        RedisServer server = this.servers.get(index);
        String target = "m" + index + ((index == primary) ? "(primary)" : "(replica)");
        return switch (fault.action()) {
            // The Sentinel promotes the replica, which may have missed the last writes: replication is asynchronous.
            // A killed replica loses nothing the primary acknowledged. A killed primary is restarted (empty, without
            // persistence) only once the Sentinel failed over (see awaitFailoverFrom).
            case KILL_MEMBER -> new StoreFault(FaultKind.KILL_MEMBER, target, index == primary,
                    () -> signal(() -> server.kill()), () -> {
                        if (index == primary) {
                            awaitFailoverFrom(index, target);
                        }
                        signal(() -> server.restart());
                        awaitWhole("the restart of " + target);
                    });
            // A paused primary that the Sentinel failed over (it does after DOWN_AFTER without an answer) loses what
            // its replica had not copied, and whatever it acknowledges after its resume until it is demoted. A pause
            // shorter than half of DOWN_AFTER cannot be failed over: the Sentinel counts from its unanswered PING,
            // sent after the pause began. A paused replica loses nothing the primary acknowledged.
            case PAUSE_MEMBER -> new StoreFault(FaultKind.PAUSE_MEMBER, target,
                    index == primary && fault.durationMillis() >= DOWN_AFTER.toMillis() / 2, () -> signal(() -> {
                        server.pause();
                        this.paused = index;
                    }), () -> {
                        // Once the Sentinel took it for down, it fails over: resumed before that ends, the old
                        // primary would serve beside the new one.
                        if (index == primary && !"master".equals(sentinel().master(MASTER).get("flags"))) {
                            awaitFailoverFrom(index, target);
                        }
                        signal(() -> {
                            server.resume();
                            this.paused = -1;
                        });
                        awaitWhole("the resume of " + target);
                    });
            // Restarted at once; the Sentinel waits longer than usual before it takes a primary for down meanwhile (it
            // reconnects to a server at most once a second, so even a quick restart could outlast DOWN_AFTER). So it
            // keeps the restarted server as the primary, empty, and the replica copies it (a full resync empties it).
            case RESTART_EMPTY -> new StoreFault(FaultKind.RESTART_EMPTY, target, true, () -> {
                sentinel().set(MASTER, "down-after-milliseconds", Long.toString(RESTART_DOWN_AFTER.toMillis()));
                signal(() -> server.restart());
            }, () -> {
                sentinel().set(MASTER, "down-after-milliseconds", Long.toString(DOWN_AFTER.toMillis()));
                awaitWhole("the empty restart of " + target);
            });
            default -> throw new IllegalArgumentException("not a member fault: " + fault.action());
        };
    }

    private void signal(Runnable action) {
        this.signals.lock();
        try {
            action.run();
        }
        finally {
            this.signals.unlock();
        }
    }

    /** @return the index of the server the Sentinel names as the primary */
    private int primaryIndex() {
        SocketAddress address = sentinel().getMasterAddrByName(MASTER);
        int port = ((InetSocketAddress) address).getPort();
        for (int i = 0; i < this.servers.size(); i++) {
            if (this.servers.get(i).port() == port) {
                return i;
            }
        }
        throw new IllegalStateException("the Sentinel names " + address + ", none of the run's servers");
    }

    private RedisSentinelCommands<String, String> sentinel() {
        return this.sentinelConnection.sync();
    }

    /**
     * Waits until the Sentinel failed over from the killed or paused primary {@code index} (it names
     * the other server, settled), so that the old primary returns as a server nobody is sent to, and
     * the heal makes it a replica before it could serve beside the new one. The split brain that
     * follows otherwise (a primary restarted by a supervisor while the Sentinel promotes its replica,
     * each serving the clients that found it) lets fences of the two lines interleave: no fence
     * keeps an order across two primaries, and the guarantees promise none. If the Sentinel does
     * not fail over in time (no replica it takes), the heal goes on and restarts or resumes the
     * primary as the Sentinel's.
     */
    private void awaitFailoverFrom(int index, String target) {
        long deadline = System.nanoTime() + FAILOVER_TIMEOUT.toNanos();
        while (System.nanoTime() - deadline < 0) {
            try {
                Map<String, String> master = sentinel().master(MASTER);
                if ("master".equals(master.get("flags"))
                        && !String.valueOf(this.servers.get(index).port()).equals(master.get("port"))) {
                    return;
                }
            }
            catch (RuntimeException ex) {
                // Read again.
            }
            sleep(100);
        }
        System.out.println("nemesis: the Sentinel did not fail over from " + target + " within " + FAILOVER_TIMEOUT
                + "; it returns as the primary");
    }

    /**
     * Waits until the topology is whole: the Sentinel settled on a primary (no failover under way,
     * not down), that server a primary with one replica, the other its replica with the link up,
     * and the Sentinel seeing that replica up. A server that is a primary but not the Sentinel's is
     * made its replica and its clients are disconnected (see the class comment).
     * @param after what the wait follows, for the failure's message
     */
    private void awaitWhole(String after) {
        long deadline = System.nanoTime() + SETTLE_TIMEOUT.toNanos();
        String state = "nothing read yet";
        while (System.nanoTime() - deadline < 0) {
            try {
                state = settle();
                if (state == null) {
                    return;
                }
            }
            catch (RuntimeException ex) {
                // A server still starting, a Sentinel reply in the middle of a failover: read again.
                state = ex.toString();
            }
            sleep(100);
        }
        throw new IllegalStateException("the Redis topology was not whole within " + SETTLE_TIMEOUT + " after "
                + after + ": " + state);
    }

    /** @return null if the topology is whole, else what is missing; makes a stray primary a replica */
    private String settle() {
        Map<String, String> master = sentinel().master(MASTER);
        String flags = master.get("flags");
        if (!"master".equals(flags)) {
            return "the Sentinel's primary is " + master.get("ip") + ":" + master.get("port") + " with flags " + flags;
        }
        int primaryIndex = primaryIndex();
        RedisServer primary = this.servers.get(primaryIndex);
        RedisServer replica = this.servers.get(1 - primaryIndex);
        String primaryInfo = primary.command("INFO", "replication");
        if (!primaryInfo.contains("role:master")) {
            return "the Sentinel's primary m" + primaryIndex + " is not a primary: " + primaryInfo;
        }
        String replicaInfo = replica.command("INFO", "replication");
        if (!replicaInfo.contains("role:slave") || !replicaInfo.contains("master_port:" + primary.port() + "\r\n")) {
            // Restarted empty, or resumed as the primary it was: as the Sentinel would, after a while.
            signal(() -> {
                replica.command("REPLICAOF", primary.host(), Integer.toString(primary.port()));
                replica.command("CLIENT", "KILL", "TYPE", "normal");
                replica.command("CLIENT", "KILL", "TYPE", "pubsub");
            });
            System.out.println("nemesis: made m" + (1 - primaryIndex) + " the replica of m" + primaryIndex);
            return "m" + (1 - primaryIndex) + " just made the replica of m" + primaryIndex;
        }
        if (!replicaInfo.contains("master_link_status:up")) {
            return "m" + (1 - primaryIndex) + " has no link to its primary yet";
        }
        if (!primaryInfo.contains("connected_slaves:1")) {
            return "the primary m" + primaryIndex + " sees no replica yet";
        }
        boolean seen = sentinel().replicas(MASTER).stream()
            .anyMatch((known) -> String.valueOf(replica.port()).equals(known.get("port"))
                    && "slave".equals(known.get("flags")));
        return seen ? null : "the Sentinel does not see m" + (1 - primaryIndex) + " as an up replica yet";
    }

    /**
     * Deletes entries behind the library's back on the primary, retrying until one is confirmed (for
     * up to a minute: past a failover or a paused primary's heal), so that the fault window covers it.
     * It is never sent to a paused server ({@link #signals}); one sent to a server killed meanwhile
     * is either applied before the kill or never.
     */
    private long deleteEntries(int scope) {
        long deadline = System.nanoTime() + SETTLE_TIMEOUT.toNanos();
        Exception failure = null;
        while (System.nanoTime() - deadline < 0) {
            this.signals.lock();
            try {
                int primaryIndex = primaryIndex();
                RedisServer primary = this.servers.get(primaryIndex);
                if (this.paused != primaryIndex && primary.command("INFO", "replication").contains("role:master")) {
                    return Long.parseLong(primary.command("EVAL", DELETE, "0", NAMESPACE, Integer.toString(scope),
                            NemesisRunner.KEYS.get(0)));
                }
            }
            catch (RuntimeException ex) {
                failure = ex;
            }
            finally {
                this.signals.unlock();
            }
            sleep(100);
        }
        throw new IllegalStateException("no primary took the delete within " + SETTLE_TIMEOUT + " (last failure: "
                + failure + ")", failure);
    }

    @Override
    public Observation observe() {
        try {
            String[] seen = this.servers.get(primaryIndex()).command("EVAL", OBSERVE, "0", NAMESPACE).split("\\|", 3);
            return new Observation(Integer.parseInt(seen[0]), Integer.parseInt(seen[1]), seen[2]);
        }
        catch (RuntimeException ex) {
            throw new IllegalStateException("could not read what Redis holds after the run", ex);
        }
    }

    private static void sleep(long millis) {
        try {
            TimeUnit.MILLISECONDS.sleep(millis);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for Redis", ex);
        }
    }

    @Override
    public void close() {
        try {
            this.sentinelConnection.close();
            this.sentinelClient.shutdown();
        }
        finally {
            this.sentinel.close();
            this.servers.forEach(RedisServer::close);
        }
    }
}
