package io.github.distlock.aop;

import java.lang.reflect.Method;

import io.github.distlock.LockLostException;
import org.springframework.context.ApplicationEvent;

/**
 * Published when the lock of a {@link io.github.distlock.annotation.DistributedLock
 * @DistributedLock} call was lost while the method ran: the hold ended without unlock, so work
 * done by the call since then may have overlapped with another holder. Published on the calling
 * thread, after the method returned and before the call reports the loss.
 */
public class LockLostEvent extends ApplicationEvent {

    private static final long serialVersionUID = 1L;

    private final transient Method method;

    private final LockLostException exception;

    /**
     * Creates an event.
     * @param source the bean whose method held the lock
     * @param method the annotated method
     * @param exception how the loss was reported by the lock
     */
    public LockLostEvent(Object source, Method method, LockLostException exception) {
        super(source);
        this.method = method;
        this.exception = exception;
    }

    /** @return the key of the lost lock */
    public String getKey() {
        return this.exception.getKey();
    }

    /** @return the fence of the lost hold */
    public long getFence() {
        return this.exception.getFence();
    }

    /** @return the annotated method that held the lock */
    public Method getMethod() {
        return this.method;
    }

    /** @return the exception the lock reported the loss with */
    public LockLostException getException() {
        return this.exception;
    }
}
