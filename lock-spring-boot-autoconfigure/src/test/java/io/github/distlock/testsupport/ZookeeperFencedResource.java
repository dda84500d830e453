package io.github.distlock.testsupport;

import java.nio.charset.StandardCharsets;

import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

/**
 * A {@link FencedResource} in ZooKeeper: one znode whose data is {@code <fence>\n<data>}, written
 * with a compare on its version, so that a write with an older fence than the stored one is refused.
 */
public final class ZookeeperFencedResource implements FencedResource {

    private final CuratorFramework client;

    private final String path;

    public ZookeeperFencedResource(CuratorFramework client, String path) {
        this.client = client;
        this.path = path;
    }

    @Override
    public boolean write(long fence, String data) {
        if (fence <= 0) {
            throw new IllegalArgumentException("fence must be positive, but was " + fence);
        }
        byte[] value = (fence + "\n" + data).getBytes(StandardCharsets.UTF_8);
        try {
            while (true) {
                Stat stat = new Stat();
                byte[] stored;
                try {
                    stored = this.client.getData().storingStatIn(stat).forPath(this.path);
                }
                catch (KeeperException.NoNodeException ex) {
                    try {
                        this.client.create().creatingParentsIfNeeded().forPath(this.path, value);
                        return true;
                    }
                    catch (KeeperException.NodeExistsException raced) {
                        continue;
                    }
                }
                if (fence <= fenceOf(stored)) {
                    return false;
                }
                try {
                    this.client.setData().withVersion(stat.getVersion()).forPath(this.path, value);
                    return true;
                }
                catch (KeeperException.BadVersionException raced) {
                    // Another writer came first: compare again.
                }
            }
        }
        catch (Exception ex) {
            throw new IllegalStateException("ZooKeeper call failed: " + ex, ex);
        }
    }

    @Override
    public long storedFence() {
        byte[] stored = read();
        return (stored != null) ? fenceOf(stored) : 0;
    }

    @Override
    public String data() {
        byte[] stored = read();
        if (stored == null) {
            return null;
        }
        String text = new String(stored, StandardCharsets.UTF_8);
        return text.substring(text.indexOf('\n') + 1);
    }

    private byte[] read() {
        try {
            return this.client.getData().forPath(this.path);
        }
        catch (KeeperException.NoNodeException ex) {
            return null;
        }
        catch (Exception ex) {
            throw new IllegalStateException("ZooKeeper call failed: " + ex, ex);
        }
    }

    private static long fenceOf(byte[] stored) {
        String text = new String(stored, StandardCharsets.UTF_8);
        return Long.parseLong(text.substring(0, text.indexOf('\n')));
    }
}
