package io.github.distlock.aop;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

import io.github.distlock.annotation.OnLockLost;
import io.github.distlock.annotation.OnTimeout;
import org.jspecify.annotations.Nullable;
import org.springframework.expression.Expression;
import org.springframework.expression.spel.SpelNode;

/**
 * What {@code @DistributedLock} asks for on one method, parsed and validated once.
 * @param method the annotated method (the most specific one, on the target class)
 * @param description the method as named in messages
 * @param keyExpression the parsed key expression, or {@code null} for one lock per method
 * @param keyParts the values the key concatenates that are read from the call (variables and their
 * properties): each must be there, or every call missing it would share one key
 * @param methodKey the key used when {@code keyExpression} is {@code null}
 * @param fair whether to wait fairly
 * @param waitTimeout how long to wait
 * @param onTimeout what to do on timeout
 * @param onLockLost how to report a lost lock
 */
record LockOperation(Method method, String description, @Nullable Expression keyExpression, List<KeyPart> keyParts,
        String methodKey, boolean fair, Duration waitTimeout, OnTimeout onTimeout, OnLockLost onLockLost) {

    /**
     * A read that a key concatenates, such as {@code #jobId} in {@code 'job:' + #jobId}.
     * @param text the read as written in the key
     * @param node the read, evaluated on its own in the call's context
     */
    record KeyPart(String text, SpelNode node) {
    }

    /**
     * Returns whether calls of a method can be skipped: their callers expect no value, or an
     * {@code Optional} that {@link #skippedResult()} leaves empty.
     * @param returnType the method's return type
     * @return whether it is {@code void}, {@code Void} or {@code Optional}
     */
    static boolean canSkip(Class<?> returnType) {
        return returnType == void.class || returnType == Void.class || returnType == Optional.class;
    }

    /**
     * Returns the wait in nanoseconds, as {@code tryLock} takes it: a wait longer than a long
     * holds (about 292 years, say {@code 200000d} for "as long as it takes") is the longest one.
     * @return the wait, at most {@link Long#MAX_VALUE} nanoseconds
     */
    long waitNanos() {
        try {
            return this.waitTimeout.toNanos();
        }
        catch (ArithmeticException ex) {
            return Long.MAX_VALUE;
        }
    }

    /**
     * Returns what a skipped call returns.
     * @return {@code Optional.empty()} for methods returning {@code Optional}, else {@code null}
     */
    @Nullable Object skippedResult() {
        return (this.method.getReturnType() == Optional.class) ? Optional.empty() : null;
    }
}
