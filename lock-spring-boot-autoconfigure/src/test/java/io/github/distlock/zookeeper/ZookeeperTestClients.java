package io.github.distlock.zookeeper;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import io.github.distlock.testsupport.ZooKeeperEnsemble;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;

/** Curator clients for the ZooKeeper store's tests, and what an expiry does to a session. */
final class ZookeeperTestClients {

    /** Session timeout asked for: long enough for a loaded machine, short enough for the tests. */
    static final int SESSION_TIMEOUT_MILLIS = 6_000;

    private ZookeeperTestClients() {
    }

    static CuratorFramework started(ZooKeeperEnsemble zookeeper) {
        return started(zookeeper, SESSION_TIMEOUT_MILLIS);
    }

    static CuratorFramework started(ZooKeeperEnsemble zookeeper, int sessionTimeoutMillis) {
        return started(zookeeper.connectString(), sessionTimeoutMillis);
    }

    /** @param connectString where the client connects, for example through a proxy */
    static CuratorFramework started(String connectString, int sessionTimeoutMillis) {
        CuratorFramework client = CuratorFrameworkFactory.newClient(connectString, sessionTimeoutMillis,
                5_000, new ExponentialBackoffRetry(100, 3));
        client.start();
        try {
            if (!client.blockUntilConnected(30, TimeUnit.SECONDS)) {
                client.close();
                throw new IllegalStateException("Could not connect to ZooKeeper at " + connectString);
            }
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(ex);
        }
        return client;
    }

    /**
     * Ends {@code client}'s session as an expiry would: another handle attaches to the session and
     * closes it, and ZooKeeper deletes the session's ephemeral nodes.
     */
    static void expireSession(CuratorFramework client, ZooKeeperEnsemble zookeeper) throws Exception {
        ZooKeeper handle = client.getZookeeperClient().getZooKeeper();
        CountDownLatch attached = new CountDownLatch(1);
        ZooKeeper intruder = new ZooKeeper(zookeeper.connectString(), SESSION_TIMEOUT_MILLIS, event -> {
            if (event.getState() == Watcher.Event.KeeperState.SyncConnected) {
                attached.countDown();
            }
        }, handle.getSessionId(), handle.getSessionPasswd());
        try {
            // Closed before it attached, the handle would end nothing on the server.
            if (!attached.await(30, TimeUnit.SECONDS)) {
                throw new IllegalStateException("Could not attach to session 0x" + Long.toHexString(handle.getSessionId()));
            }
        }
        finally {
            intruder.close();
        }
    }
}
