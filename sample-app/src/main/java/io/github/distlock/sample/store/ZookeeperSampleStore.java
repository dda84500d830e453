package io.github.distlock.sample.store;

import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.github.distlock.sample.SampleProperties;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.BackgroundCallback;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.framework.api.transaction.CuratorTransactionResult;
import org.apache.curator.utils.PathUtils;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.KeeperException.Code;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.stereotype.Component;

/**
 * The sample's shared data in ZooKeeper ({@code distributed-lock.store=zookeeper}), through the
 * {@link CuratorFramework} client that the starter auto-configures for the locks. Every path is
 * one child of the znode that {@code sample.store.prefix} names ({@code /sample/} is the znode
 * {@code /sample}), named by the path URL-encoded ({@code stock/sku-1} is
 * {@code /sample/stock%2Fsku-1}): any path is a valid name, and a listing by path prefix is one
 * read of the children. A fenced value's fence is at {@code <path>/fence}, in decimal; a fenced
 * write is one ZooKeeper multi-operation that sets the value and the fence, on the condition that
 * the fence has not changed since it was read and found smaller.
 *
 * <p>Calls run in Curator's background mode, so that each one is bounded by
 * {@code sample.store.timeout} whatever Curator's connection and retry settings are.
 */
@Component
@ConditionalOnProperty(name = "distributed-lock.store", havingValue = "zookeeper")
public class ZookeeperSampleStore implements SampleStore {

    private final CuratorFramework curator;

    /** The znode under which every value is, for example {@code /sample}. */
    private final String base;

    private final Duration timeout;

    /** Whether {@link #base} was created or found; set again when a write finds it gone. */
    private volatile boolean baseExists;

    public ZookeeperSampleStore(CuratorFramework curator, SampleProperties properties) {
        this.curator = curator;
        this.base = baseNode(properties.store().prefix());
        this.timeout = properties.store().timeout();
    }

    /** {@code /sample/} and {@code /sample} both name the znode {@code /sample}; the root is not allowed. */
    static String baseNode(String prefix) {
        String base = prefix.endsWith("/") ? prefix.substring(0, prefix.length() - 1) : prefix;
        try {
            PathUtils.validatePath(base);
        }
        catch (IllegalArgumentException ex) {
            throw new IllegalArgumentException("sample.store.prefix '" + prefix + "' does not name a znode for "
                    + "distributed-lock.store=zookeeper (an absolute path such as /sample/): " + ex.getMessage(), ex);
        }
        if (base.equals("/")) {
            throw new IllegalArgumentException("sample.store.prefix must name a znode below the root for "
                    + "distributed-lock.store=zookeeper, such as /sample/");
        }
        return base;
    }

    @Override
    public Optional<String> get(String path) {
        Deadline deadline = deadline();
        CuratorEvent event = call(deadline, "read " + path, callback -> this.curator.getData()
            .inBackground(callback)
            .forPath(node(path)));
        if (event.getResultCode() == Code.NONODE.intValue()) {
            return Optional.empty();
        }
        check(event, "read " + path);
        return Optional.of(text(event.getData()));
    }

    @Override
    public Map<String, String> list(String pathPrefix) {
        Deadline deadline = deadline();
        String what = "list " + pathPrefix;
        CuratorEvent children = call(deadline, what, callback -> this.curator.getChildren()
            .inBackground(callback)
            .forPath(this.base));
        Map<String, String> values = new TreeMap<>();
        if (children.getResultCode() == Code.NONODE.intValue()) {
            return values;
        }
        check(children, what);
        // Every matching value is read at once; then the answers are collected.
        List<String> paths = new ArrayList<>();
        List<CompletableFuture<CuratorEvent>> reads = new ArrayList<>();
        for (String name : children.getChildren()) {
            String path = decode(name);
            if (path.startsWith(pathPrefix)) {
                paths.add(path);
                reads.add(start(what, callback -> this.curator.getData().inBackground(callback).forPath(node(path))));
            }
        }
        for (int i = 0; i < reads.size(); i++) {
            CuratorEvent read = await(reads.get(i), deadline, what);
            if (read.getResultCode() != Code.NONODE.intValue()) {
                check(read, what);
                values.put(paths.get(i).substring(pathPrefix.length()), text(read.getData()));
            }
        }
        return values;
    }

    @Override
    public void put(String path, String value) {
        Deadline deadline = deadline();
        check(call(deadline, "write " + path, callback -> this.curator.create()
            .orSetData()
            .creatingParentsIfNeeded()
            .inBackground(callback)
            .forPath(node(path), bytes(value))), "write " + path);
    }

    @Override
    public boolean create(String path, String value) {
        Deadline deadline = deadline();
        CuratorEvent event = call(deadline, "create " + path, callback -> this.curator.create()
            .creatingParentsIfNeeded()
            .inBackground(callback)
            .forPath(node(path), bytes(value)));
        if (event.getResultCode() == Code.NODEEXISTS.intValue()) {
            return false;
        }
        check(event, "create " + path);
        return true;
    }

    @Override
    public boolean createFenced(String path, String value) {
        Deadline deadline = deadline();
        String what = "create " + path;
        for (int attempt = 1;; attempt++) {
            ensureBase(deadline, what);
            CuratorEvent event = multi(deadline, what, () -> List.of(
                    this.curator.transactionOp().create().forPath(node(path), bytes(value)),
                    this.curator.transactionOp().create().forPath(node(fencePath(path)), bytes(Long.toString(0)))));
            Code failure = failure(event);
            if (failure == Code.OK) {
                return true;
            }
            if (failure == Code.NODEEXISTS) {
                return false;
            }
            if (failure == Code.NONODE && attempt == 1) {
                // The base znode was deleted since this store saw it.
                this.baseExists = false;
                continue;
            }
            throw failed(what, failure);
        }
    }

    @Override
    public FencedWrite putFenced(String path, String value, long fence) {
        Deadline deadline = deadline();
        String what = "write " + path;
        String fenceNode = node(fencePath(path));
        while (true) {
            CuratorEvent read = call(deadline, what, callback -> this.curator.getData()
                .inBackground(callback)
                .forPath(fenceNode));
            if (read.getResultCode() == Code.NONODE.intValue()) {
                return FencedWrite.MISSING;
            }
            check(read, what);
            long storedFence = Long.parseLong(text(read.getData()));
            if (storedFence >= fence) {
                return FencedWrite.stale(storedFence);
            }
            // Conditional on the fence's version: a write that came in between makes this one read again.
            int fenceVersion = read.getStat().getVersion();
            CuratorEvent write = multi(deadline, what, () -> List.of(
                    this.curator.transactionOp().setData().withVersion(fenceVersion)
                        .forPath(fenceNode, bytes(Long.toString(fence))),
                    this.curator.transactionOp().setData().forPath(node(path), bytes(value))));
            Code failure = failure(write);
            if (failure == Code.OK) {
                return FencedWrite.WRITTEN;
            }
            if (failure == Code.NONODE) {
                return FencedWrite.MISSING;
            }
            if (failure != Code.BADVERSION) {
                throw failed(what, failure);
            }
        }
    }

    /** Creates the base znode (and its parents) unless this store has seen it. */
    private void ensureBase(Deadline deadline, String what) {
        if (this.baseExists) {
            return;
        }
        CuratorEvent event = call(deadline, what, callback -> this.curator.create()
            .creatingParentsIfNeeded()
            .inBackground(callback)
            .forPath(this.base));
        if (event.getResultCode() != Code.NODEEXISTS.intValue()) {
            check(event, what);
        }
        this.baseExists = true;
    }

    /** Runs {@code operations} as one ZooKeeper multi-operation: all or none. */
    private CuratorEvent multi(Deadline deadline, String what, Operations operations) {
        return call(deadline, what, callback -> this.curator.transaction()
            .inBackground(callback)
            .forOperations(operations.get()));
    }

    /** @return {@code OK}, or the error of the first operation of a multi-operation that failed */
    private static Code failure(CuratorEvent event) {
        if (event.getResultCode() == Code.OK.intValue()) {
            return Code.OK;
        }
        List<CuratorTransactionResult> results = event.getOpResults();
        if (results != null) {
            for (CuratorTransactionResult result : results) {
                if (result.getError() != Code.OK.intValue() && result.getError() != Code.RUNTIMEINCONSISTENCY.intValue()) {
                    return Code.get(result.getError());
                }
            }
        }
        return Code.get(event.getResultCode());
    }

    private String node(String path) {
        return this.base + "/" + encode(path);
    }

    private static String fencePath(String path) {
        return path + "/fence";
    }

    /**
     * A path as one znode name: URL-encoded, which leaves no {@code /}; since ZooKeeper takes
     * {@code .} and {@code ..} for relative paths, they are {@code %2E} and {@code %2E%2E}
     * (which the encoder never writes for anything else, as it keeps dots).
     */
    static String encode(String path) {
        if (path.isEmpty()) {
            throw new IllegalArgumentException("The path of a value of the sample must not be empty");
        }
        String name = URLEncoder.encode(path, StandardCharsets.UTF_8);
        return (name.equals(".") || name.equals("..")) ? name.replace(".", "%2E") : name;
    }

    static String decode(String name) {
        return URLDecoder.decode(name, StandardCharsets.UTF_8);
    }

    private Deadline deadline() {
        return new Deadline(System.nanoTime() + this.timeout.toNanos());
    }

    /** Runs one background call and waits for its answer until {@code deadline}. */
    private CuratorEvent call(Deadline deadline, String what, BackgroundCall call) {
        return await(start(what, call), deadline, what);
    }

    private CompletableFuture<CuratorEvent> start(String what, BackgroundCall call) {
        CompletableFuture<CuratorEvent> answer = new CompletableFuture<>();
        try {
            call.start((client, event) -> answer.complete(event));
        }
        catch (Exception ex) {
            throw new StoreUnavailableException("ZooKeeper request failed (" + what + "): " + ex.getMessage(), ex);
        }
        return answer;
    }

    private CuratorEvent await(CompletableFuture<CuratorEvent> answer, Deadline deadline, String what) {
        try {
            return answer.get(Math.max(0, deadline.nanos() - System.nanoTime()), TimeUnit.NANOSECONDS);
        }
        catch (TimeoutException ex) {
            throw new StoreUnavailableException("ZooKeeper did not answer within " + this.timeout.toMillis()
                    + " ms (" + what + ")", ex);
        }
        catch (ExecutionException ex) {
            Throwable failure = (ex.getCause() != null) ? ex.getCause() : ex;
            throw new StoreUnavailableException("ZooKeeper request failed (" + what + "): " + failure.getMessage(),
                    failure);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new StoreUnavailableException("interrupted while waiting for ZooKeeper (" + what + ")", ex);
        }
    }

    private static void check(CuratorEvent event, String what) {
        if (event.getResultCode() != Code.OK.intValue()) {
            throw failed(what, Code.get(event.getResultCode()));
        }
    }

    private static StoreUnavailableException failed(String what, Code code) {
        KeeperException cause = KeeperException.create(code);
        return new StoreUnavailableException("ZooKeeper request failed (" + what + "): " + cause.getMessage(), cause);
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    private static String text(byte[] bytes) {
        return (bytes != null) ? new String(bytes, StandardCharsets.UTF_8) : "";
    }

    /** Starts a Curator call in the background with {@code callback}. */
    @FunctionalInterface
    private interface BackgroundCall {

        void start(BackgroundCallback callback) throws Exception;
    }

    /** The operations of a multi-operation (Curator's builders may throw). */
    @FunctionalInterface
    private interface Operations {

        List<CuratorOp> get() throws Exception;
    }

    /** When a call of this store must have its answer, on {@link System#nanoTime()}. */
    private record Deadline(long nanos) {
    }
}
