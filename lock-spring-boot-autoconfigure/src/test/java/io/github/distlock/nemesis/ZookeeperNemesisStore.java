package io.github.distlock.nemesis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.github.distlock.nemesis.FaultPlan.Action;
import io.github.distlock.nemesis.FaultPlan.Fault;
import io.github.distlock.nemesis.HistoryEvent.FaultKind;
import io.github.distlock.testsupport.ZooKeeperEnsemble;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

/**
 * ZooKeeper under a nemesis run: a three-member ensemble. Members are killed (and restarted on
 * their data) or paused, the leader as often as not, one at a time: the quorum keeps every znode
 * and session. Entries are deleted behind the library's back by the runner's own Curator client,
 * the only way ZooKeeper loses them here: every lock node with its entries, the hot key's entries,
 * or the hot key's oldest entry (its holder's).
 */
final class ZookeeperNemesisStore implements NemesisStore {

    /**
     * How long ZooKeeper takes to serve the workers again after a member's loss or heal. The
     * members elect within a second or two (200 ms to finalize a vote, 500 ms ticks), and a heal
     * only ends once every member serves under one leader (see {@link #awaitServing}); but a
     * client whose server was lost notices only when its read timeout (two thirds of the session
     * timeout) ends, then reconnects after a random pause of up to a second with a connect timeout
     * of a third of the session timeout per member; and a call sent before the loss fails over
     * only when the library's request timeout (5 s by default) ends. That timeout bounds the gap.
     */
    static final Duration ELECTION = Duration.ofSeconds(5);

    static final String NAMESPACE = "/nemesis";

    /** Lock nodes start with it (see {@code ZookeeperKeyspace}); the run's keys need no escaping. */
    private static final String LOCK_MARKER = "#";

    /** How long a heal waits for the ensemble to serve again, and a delete for ZooKeeper to confirm it. */
    private static final Duration SERVE_TIMEOUT = Duration.ofSeconds(60);

    /** Session ids in the leader's {@code dump}: {@code 0x} and up to 16 hex digits. */
    private static final Pattern SESSION_ID = Pattern.compile("0x[0-9a-fA-F]{1,16}\\b");

    private final ZooKeeperEnsemble ensemble;

    private final CuratorFramework client;

    private ZookeeperNemesisStore(ZooKeeperEnsemble ensemble) {
        this.ensemble = ensemble;
        // Its own session, long enough to ride out a member fault; not one of the workers'.
        this.client = CuratorFrameworkFactory.newClient(ensemble.connectString(), 10_000, 5_000,
                new ExponentialBackoffRetry(100, 3));
        this.client.start();
        try {
            if (!this.client.blockUntilConnected(30, TimeUnit.SECONDS)) {
                throw new IllegalStateException("could not connect to " + ensemble);
            }
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(ex);
        }
    }

    static ZookeeperNemesisStore start() {
        ZooKeeperEnsemble ensemble = ZooKeeperEnsemble.threeMembers();
        try {
            return new ZookeeperNemesisStore(ensemble);
        }
        catch (RuntimeException ex) {
            ensemble.close();
            throw ex;
        }
    }

    @Override
    public Type type() {
        return Type.ZOOKEEPER;
    }

    @Override
    public int members() {
        return this.ensemble.size();
    }

    @Override
    public List<String> addresses() {
        List<String> addresses = new ArrayList<>();
        for (int i = 0; i < this.ensemble.size(); i++) {
            addresses.add(this.ensemble.member(i).address());
        }
        return addresses;
    }

    @Override
    public String spec(List<String> addresses) {
        // Through the proxies the ZooKeeper client sees three servers and moves its session between them.
        return "zookeeper=" + String.join(",", addresses);
    }

    @Override
    public String namespace() {
        return NAMESPACE;
    }

    @Override
    public Map<Action, Integer> weights() {
        return Map.of(Action.KILL_MEMBER, 20, Action.PAUSE_MEMBER, 20, Action.DELETE_ENTRIES, 20,
                Action.NETWORK_WORKER, 15);
    }

    @Override
    public Bounds bounds(Duration ttl) {
        // waitOverrun: FencedLock documents timeout + 1 s (a store attempt's floor); 0.5 s more for scheduling
        // on a machine where 3 ZooKeeper JVMs and the worker JVMs share few cores.
        Duration waitOverrun = Duration.ofMillis(1_500);
        // lossReport: a holder learns of its deleted node from the watch it keeps on it (ZooKeeper fires it at once,
        // or when the client reconnects and sets its watches again), and ends its session half a session timeout
        // after the last sync the leader answered was sent, whatever Curator's connection state says (SUSPENDED ends
        // nothing in this library): the contact budget of ZookeeperSession, checked every eighth of the timeout
        // and by every look at the hold. Another process is granted the key only after ZooKeeper expired the session
        // (a full timeout without a touch) or deleted the node, so from then on at most half a timeout plus a check
        // interval may pass; 1 s more for scheduling and the event thread on a loaded machine.
        Duration lossReport = ttl.dividedBy(2).plus(ttl.dividedBy(8)).plusSeconds(1);
        // fairnessSlack: a request is recorded before the call creates its entry, which the leader orders only once
        // it got there through the worker's proxy (in the runner's JVM) and the member the worker is connected to
        // (after a session loss, a sync and a read first): that way, through three JVMs besides the worker's on a
        // loaded machine, is the window in which two fair requests may reach the leader in either order. Measured
        // at the start of a run, when 16 threads ask at once: a worker's first creates got there ~300 ms late.
        Duration fairnessSlack = Duration.ofMillis(500);
        // Fences are creation zxids (with local passes in the low bits): a zxid counts every write of the ensemble
        // and its epoch grows with every election, so fences never go back, also when lock nodes are deleted behind
        // the library's back and their sequence counters restart (G12).
        return new Bounds(ttl, ELECTION, waitOverrun, lossReport, fairnessSlack, true);
    }

    @Override
    public StoreFault fault(Fault fault) {
        return switch (fault.action()) {
            case KILL_MEMBER, PAUSE_MEMBER -> {
                int leader = fault.leader() ? this.ensemble.leaderIndex() : -1;
                int index = (leader >= 0) ? leader : fault.target();
                ZooKeeperEnsemble.Member member = this.ensemble.member(index);
                String target = "m" + index + ((leader >= 0) ? "(leader)" : "");
                // A member restarts on its own data, with the quorum's: no znode or session is lost. The heal waits
                // until the ensemble serves again, so that the next member fault hits a whole ensemble.
                yield (fault.action() == Action.KILL_MEMBER)
                        ? new StoreFault(FaultKind.KILL_MEMBER, target, false, member::kill, () -> {
                            member.restart();
                            awaitServing();
                        })
                        : new StoreFault(FaultKind.PAUSE_MEMBER, target, false, member::pause, () -> {
                            member.resume();
                            awaitServing();
                        });
            }
            case DELETE_ENTRIES -> {
                String[] scopes = { "every lock node", "the entries of '" + NemesisRunner.KEYS.get(0) + "'",
                        "the oldest entry of '" + NemesisRunner.KEYS.get(0) + "'" };
                // In the heal, on a heal thread: the delete can wait for the client to move off a lost member.
                yield new StoreFault(FaultKind.DELETE_ENTRIES, scopes[fault.target()], true, () -> {
                }, () -> System.out.println("nemesis: deleted " + deleteEntries(fault.target()) + " entries"));
            }
            default -> throw new IllegalArgumentException("ZooKeeper has no fault " + fault.action());
        };
    }

    /**
     * Waits until every member serves and exactly one says it leads: a resumed leader that the
     * others replaced still says so until it notices, and a member that rejoins answers only once
     * it has synced with the leader.
     */
    private void awaitServing() {
        long deadline = System.nanoTime() + SERVE_TIMEOUT.toNanos();
        boolean serving = false;
        while (!serving && System.nanoTime() < deadline) {
            serving = servesUnderOneLeader();
            if (!serving) {
                try {
                    Thread.sleep(100);
                }
                catch (InterruptedException ex) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("interrupted while waiting for " + this.ensemble, ex);
                }
            }
        }
        if (!serving) {
            throw new IllegalStateException(this.ensemble + " did not serve under one leader within " + SERVE_TIMEOUT);
        }
    }

    private boolean servesUnderOneLeader() {
        int leaders = 0;
        for (int i = 0; i < this.ensemble.size(); i++) {
            String mode = this.ensemble.member(i).mode();
            if (mode == null) {
                return false;
            }
            leaders += mode.equals("leader") ? 1 : 0;
        }
        return leaders == 1;
    }

    /**
     * Deletes entries behind the library's back until ZooKeeper confirms (see
     * {@link NemesisStore#untilConfirmed}; a node found gone counts as deleted by then).
     * @param scope 0: every lock node with its entries (their sequence counters restart), 1: the hot
     * key's entries, 2: its oldest entry
     * @return how many entries were deleted
     */
    private long deleteEntries(int scope) {
        return NemesisStore.untilConfirmed("ZooKeeper", SERVE_TIMEOUT, () -> switch (scope) {
                    case 0 -> {
                        long deleted = 0;
                        for (String lockNode : lockNodes()) {
                            deleted += entries(lockNode).size();
                            this.client.delete().deletingChildrenIfNeeded().forPath(lockNode);
                        }
                        yield deleted;
                    }
                    case 1 -> {
                        long deleted = 0;
                        String lockNode = hotLockNode();
                        for (String entry : entries(lockNode)) {
                            deleted += delete(lockNode + "/" + entry);
                        }
                        yield deleted;
                    }
                    default -> {
                        String lockNode = hotLockNode();
                        // The oldest by creation zxid, the order the library grants in.
                        String oldest = null;
                        long oldestZxid = Long.MAX_VALUE;
                        for (String entry : entries(lockNode)) {
                            Stat stat = this.client.checkExists().forPath(lockNode + "/" + entry);
                            if (stat != null && stat.getCzxid() < oldestZxid) {
                                oldest = entry;
                                oldestZxid = stat.getCzxid();
                            }
                        }
                        yield (oldest != null) ? delete(lockNode + "/" + oldest) : 0;
                    }
                });
    }

    /** @return 1 if it deleted the node, 0 if it was gone already */
    private long delete(String path) throws Exception {
        try {
            this.client.delete().forPath(path);
            return 1;
        }
        catch (KeeperException.NoNodeException ex) {
            return 0;
        }
    }

    private static String hotLockNode() {
        return NAMESPACE + "/" + LOCK_MARKER + NemesisRunner.KEYS.get(0);
    }

    /** @return the lock nodes of the namespace (warm-up keys included) */
    private List<String> lockNodes() throws Exception {
        try {
            return this.client.getChildren().forPath(NAMESPACE).stream()
                .filter((child) -> child.startsWith(LOCK_MARKER)).map((child) -> NAMESPACE + "/" + child).toList();
        }
        catch (KeeperException.NoNodeException ex) {
            return List.of();
        }
    }

    /** @return the children of a lock node, its entries; none if it is gone */
    private List<String> entries(String lockNode) throws Exception {
        try {
            return this.client.getChildren().forPath(lockNode);
        }
        catch (KeeperException.NoNodeException ex) {
            return List.of();
        }
    }

    /**
     * Entries: the children of every lock node (ZooKeeper removes an empty lock node, a container,
     * only a minute later). Sessions: every session the leader tracks (its {@code dump}), but this
     * store's own; the ensemble is the run's own, so the rest are the workers'. An entry's
     * ephemeral owner is such a session too, so a left entry shows in both counts.
     */
    @Override
    public Observation observe() {
        try {
            List<String> entries = new ArrayList<>();
            for (String lockNode : lockNodes()) {
                entries(lockNode).stream().sorted(Comparator.naturalOrder())
                    .forEach((entry) -> entries.add(lockNode + "/" + entry));
            }
            Set<String> sessions = sessions();
            return new Observation(entries.size(), sessions.size(), "entries " + entries.stream().limit(10).toList()
                    + ", sessions " + sessions.stream().limit(10).toList());
        }
        catch (Exception ex) {
            throw new IllegalStateException("could not read what ZooKeeper holds after the run", ex);
        }
    }

    /** @return the session ids in the leader's session tracker, without this store's own */
    private Set<String> sessions() throws Exception {
        int leader = this.ensemble.leaderIndex();
        String dump = (leader >= 0) ? this.ensemble.member(leader).command("dump") : null;
        if (dump == null || !dump.contains("SessionTracker dump")) {
            throw new IllegalStateException("the leader (m" + leader + ") did not dump its sessions: " + dump);
        }
        // Sessions are listed before the ephemeral nodes, whose owners are among them.
        int ephemerals = dump.indexOf("ephemeral nodes dump");
        String tracker = (ephemerals >= 0) ? dump.substring(0, ephemerals) : dump;
        Set<String> sessions = new TreeSet<>();
        Matcher id = SESSION_ID.matcher(tracker);
        while (id.find()) {
            sessions.add(Long.toHexString(Long.parseUnsignedLong(id.group().substring(2), 16)));
        }
        sessions.remove(Long.toHexString(this.client.getZookeeperClient().getZooKeeper().getSessionId()));
        return sessions;
    }

    @Override
    public void close() {
        try {
            this.client.close();
        }
        finally {
            this.ensemble.close();
        }
    }
}
