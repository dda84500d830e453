package io.github.distlock.nemesis;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.GetOption;
import io.github.distlock.nemesis.FaultPlan.Action;
import io.github.distlock.nemesis.FaultPlan.Fault;
import io.github.distlock.nemesis.HistoryEvent.FaultKind;
import io.github.distlock.testsupport.EtcdCluster;

/**
 * etcd under a nemesis run: a three-member cluster. Members are killed (and restarted on their
 * data) or paused, the leader as often as not, one at a time: the quorum keeps every entry and
 * lease. Entries are deleted behind the library's back, the only way etcd loses them here.
 */
final class EtcdNemesisStore implements NemesisStore {

    /**
     * How long etcd takes to serve again after a member's loss or heal. The members elect within
     * about 1-3 s (1 s election timeout), but a call that went to a member just before it was
     * paused only fails over when the library's request timeout (5 s by default) ends; so that
     * timeout bounds the gap.
     */
    static final Duration ELECTION = Duration.ofSeconds(5);

    static final String NAMESPACE = "/nemesis/";

    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
        .connectTimeout(Duration.ofSeconds(2)).build();

    private static final Pattern LEASE_ID = Pattern.compile("\"ID\"\\s*:\\s*\"?(\\d+)");

    private static final Pattern VERSION = Pattern.compile("etcd Version: (\\d+)\\.(\\d+)\\.(\\d+)");

    private final EtcdCluster cluster;

    private final Client client;

    /**
     * Whether a paused leader that resumes may revoke live leases: etcd before 3.4.28 and 3.5.11
     * (etcd issues 12528 and 15247) lets a resumed leader that has not noticed its deposition expire
     * leases by its own books, and commits those revokes. Every entry of such a lease is then gone
     * behind its holder's back, as if deleted; the nemesis found it (seed 20261129) and says so.
     */
    private final boolean resumedLeaderRevokesLeases;

    private EtcdNemesisStore(EtcdCluster cluster, boolean resumedLeaderRevokesLeases) {
        this.cluster = cluster;
        this.client = cluster.newClient();
        this.resumedLeaderRevokesLeases = resumedLeaderRevokesLeases;
    }

    static EtcdNemesisStore start() {
        boolean revokes = resumedLeaderRevokesLeases(version());
        return new EtcdNemesisStore(EtcdCluster.threeMembers(), revokes);
    }

    /** @return the etcd binary's version as {@code {major, minor, patch}} */
    static int[] version() {
        Path binary = EtcdCluster.locateEtcdBinary();
        try {
            Process process = new ProcessBuilder(binary.toString(), "--version").redirectErrorStream(true).start();
            String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
            Matcher version = VERSION.matcher(output);
            if (!version.find()) {
                throw new IllegalStateException(binary + " --version printed no version: " + output);
            }
            return new int[] { Integer.parseInt(version.group(1)), Integer.parseInt(version.group(2)),
                    Integer.parseInt(version.group(3)) };
        }
        catch (IOException ex) {
            throw new IllegalStateException("could not run " + binary + " --version", ex);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while asking " + binary + " for its version", ex);
        }
    }

    /** @return whether etcd {@code version} has the resumed-leader lease revocation (fixed in 3.4.28, 3.5.11) */
    static boolean resumedLeaderRevokesLeases(int[] version) {
        int major = version[0];
        int minor = version[1];
        int patch = version[2];
        return major < 3 || major == 3 && (minor < 4 || minor == 4 && patch < 28 || minor == 5 && patch < 11);
    }

    @Override
    public Type type() {
        return Type.ETCD;
    }

    @Override
    public int members() {
        return this.cluster.size();
    }

    @Override
    public List<String> addresses() {
        return this.cluster.clientEndpoints().stream().map((endpoint) -> URI.create(endpoint))
            .map((uri) -> uri.getHost() + ":" + uri.getPort()).toList();
    }

    @Override
    public String spec(List<String> addresses) {
        return "etcd=" + String.join(",", addresses.stream().map((address) -> "http://" + address).toList());
    }

    @Override
    public String namespace() {
        return NAMESPACE;
    }

    @Override
    public Map<Action, Integer> weights() {
        return Map.of(Action.KILL_MEMBER, 20, Action.PAUSE_MEMBER, 20, Action.LOSE_QUORUM, 5,
                Action.DELETE_ENTRIES, 20, Action.NETWORK_WORKER, 15);
    }

    @Override
    public Bounds bounds(Duration ttl) {
        // waitOverrun: FencedLock documents timeout + 1 s (a store attempt's floor); 0.5 s more for scheduling
        // on a machine where 3 etcd members and the worker JVMs share few cores.
        Duration waitOverrun = Duration.ofMillis(1_500);
        // lossReport: a holder learns of a deleted entry from its watch, and of an expired lease no later than one
        // TTL after the last keep-alive etcd acknowledged, which was before another process could be granted the key
        // (design, section 7); 1 s more for the watch stream's reconnect and scheduling.
        Duration lossReport = ttl.plusSeconds(1);
        // fairnessSlack: a request is recorded before the call writes its queue entry through etcd's consensus (and
        // grants a session lease first, after a loss): that round trip is the window in which two fair requests may
        // reach etcd in either order.
        Duration fairnessSlack = Duration.ofMillis(250);
        // Fences are etcd revisions (shifted, with local passes in the low bits): they never go back, also when
        // entries are deleted behind the library's back (G12).
        return new Bounds(ttl, ELECTION, waitOverrun, lossReport, fairnessSlack, true);
    }

    @Override
    public StoreFault fault(Fault fault) {
        return switch (fault.action()) {
            case KILL_MEMBER, PAUSE_MEMBER -> {
                // -1 while the members do not agree on a leader: then the member hit may be it.
                int leader = this.cluster.leaderIndex();
                int index = (fault.leader() && leader >= 0) ? leader : fault.target();
                boolean maybeLeader = index == leader || leader < 0;
                EtcdCluster.Member member = this.cluster.member(index);
                String target = "m" + index + ((index == leader) ? "(leader)" : "");
                // A member restarts on its own data, with the quorum's: no entry or lease is lost; a paused
                // leader may revoke leases when it resumes, on the etcd versions that have that bug.
                yield (fault.action() == Action.KILL_MEMBER)
                        ? new StoreFault(FaultKind.KILL_MEMBER, target, false, member::kill, member::restart)
                        : new StoreFault(FaultKind.PAUSE_MEMBER, target,
                                maybeLeader && this.resumedLeaderRevokesLeases, member::pause, member::resume);
            }
            case LOSE_QUORUM -> {
                // Two of three members stopped: nothing commits, keep-alives fail, sessions end on the
                // clients' side; the quorum keeps every entry and lease (a new leader extends the leases).
                int second = (fault.target() + 1) % this.cluster.size();
                List<EtcdCluster.Member> majority = List.of(this.cluster.member(fault.target()),
                        this.cluster.member(second));
                int leader = this.cluster.leaderIndex();
                boolean withLeader = leader == fault.target() || leader == second || leader < 0;
                yield new StoreFault(FaultKind.LOSE_QUORUM, "m" + fault.target() + "+m" + second
                        + (withLeader ? "(leader)" : ""), withLeader && this.resumedLeaderRevokesLeases,
                        () -> majority.forEach(EtcdCluster.Member::pause),
                        () -> majority.forEach(EtcdCluster.Member::resume));
            }
            case DELETE_ENTRIES -> {
                String[] scopes = { "every entry", "the entries of '" + NemesisRunner.KEYS.get(0) + "'",
                        "the oldest entry of '" + NemesisRunner.KEYS.get(0) + "'" };
                // In the heal, on a heal thread: during a member pause the delete can wait for that member's heal.
                yield new StoreFault(FaultKind.DELETE_ENTRIES, scopes[fault.target()], true, () -> {
                }, () -> System.out.println("nemesis: deleted " + deleteEntries(fault.target()) + " entries"));
            }
            default -> throw new IllegalArgumentException("etcd has no fault " + fault.action());
        };
    }

    /**
     * Deletes entries behind the library's back until etcd confirms a delete (see
     * {@link NemesisStore#untilConfirmed}). etcd may fail a delete whose outcome it does not know
     * ("request timed out"); such an attempt is either applied before a later one that succeeds (one
     * raft log) or never.
     */
    private long deleteEntries(int scope) {
        String hot = NemesisRunner.KEYS.get(0);
        ByteSequence prefix = bytes(NAMESPACE + "#" + ((scope == 0) ? "" : hot + "/"));
        return NemesisStore.untilConfirmed("etcd", Duration.ofSeconds(30), () -> {
            if (scope < 2) {
                return this.client.getKVClient().delete(prefix, DeleteOption.builder().isPrefix(true).build())
                    .get(10, TimeUnit.SECONDS).getDeleted();
            }
            List<KeyValue> oldest = this.client.getKVClient()
                .get(prefix, GetOption.builder().isPrefix(true).withSortField(GetOption.SortTarget.CREATE)
                    .withSortOrder(GetOption.SortOrder.ASCEND).withLimit(1).build())
                .get(10, TimeUnit.SECONDS).getKvs();
            if (oldest.isEmpty()) {
                return 0;
            }
            return this.client.getKVClient().delete(oldest.get(0).getKey()).get(10, TimeUnit.SECONDS).getDeleted();
        });
    }

    @Override
    public Observation observe() {
        try {
            List<String> keys = this.client.getKVClient()
                .get(bytes(NAMESPACE), GetOption.builder().isPrefix(true).withKeysOnly(true).build())
                .get(30, TimeUnit.SECONDS).getKvs().stream()
                .map((kv) -> kv.getKey().toString(StandardCharsets.UTF_8)).toList();
            // The cluster is the run's own: every lease is a worker's session.
            List<String> leases = leases();
            return new Observation(keys.size(), leases.size(), "keys " + keys.stream().limit(10).toList() + ", leases "
                    + leases.stream().limit(10).toList());
        }
        catch (Exception ex) {
            throw new IllegalStateException("could not read what etcd holds after the run", ex);
        }
    }

    /** Lease ids, from etcd's JSON gateway: jetcd 0.8 has no call that lists leases. */
    private List<String> leases() throws IOException, InterruptedException {
        HttpRequest request = HttpRequest.newBuilder(URI.create(this.cluster.clientEndpoint() + "/v3/lease/leases"))
            .timeout(Duration.ofSeconds(10)).POST(HttpRequest.BodyPublishers.ofString("{}")).build();
        HttpResponse<String> response = HTTP.send(request, HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() != 200) {
            throw new IOException("listing leases answered " + response.statusCode() + ": " + response.body());
        }
        List<String> ids = new ArrayList<>();
        Matcher id = LEASE_ID.matcher(response.body());
        while (id.find()) {
            ids.add(Long.toHexString(Long.parseLong(id.group(1))));
        }
        return ids;
    }

    private static ByteSequence bytes(String text) {
        return ByteSequence.from(text, StandardCharsets.UTF_8);
    }

    @Override
    public void close() {
        try {
            this.client.close();
        }
        finally {
            this.cluster.close();
        }
    }
}
