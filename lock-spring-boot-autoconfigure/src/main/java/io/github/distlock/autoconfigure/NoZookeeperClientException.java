package io.github.distlock.autoconfigure;

/**
 * {@code distributed-lock.store=zookeeper}, but Apache Curator or the ZooKeeper client is not on
 * the class path. Says what to add.
 */
public class NoZookeeperClientException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final String action;

    /**
     * Creates an exception.
     * @param problem what is wrong
     * @param action what to do about it
     */
    public NoZookeeperClientException(String problem, String action) {
        super(problem);
        this.action = action;
    }

    /** @return what to do about it */
    public String getAction() {
        return this.action;
    }

    static NoZookeeperClientException notOnClassPath() {
        return new NoZookeeperClientException("distributed-lock.store=zookeeper keeps locks in ZooKeeper through "
                + "Apache Curator, but org.apache.curator:curator-framework (with org.apache.zookeeper:zookeeper) "
                + "is not on the class path.",
                "Add org.apache.curator:curator-framework (5.x, which brings the ZooKeeper client) to the "
                        + "application and configure the ensemble under distributed-lock.zookeeper (connect-string, "
                        + "session-timeout, username and password), or choose another distributed-lock.store.");
    }
}
