package io.github.distlock.aop;

/**
 * A {@code @DistributedLock} method is called, or checked at start-up, but the application has no
 * {@link io.github.distlock.LockRegistry} bean to lock with.
 */
public class NoLockRegistryException extends IllegalStateException {

    private static final long serialVersionUID = 1L;

    /**
     * Creates an exception.
     * @param message what is missing, naming the method where known
     */
    public NoLockRegistryException(String message) {
        super(message);
    }

    /** @return what to do about it */
    public String getAction() {
        return "Put io.etcd:jetcd-core on the class path for distributed-lock.store=etcd (lock-spring-boot-starter "
                + "brings it) or the client of the store you chose, set distributed-lock.store=in-memory for a single "
                + "instance, or define a LockRegistry bean.";
    }
}
