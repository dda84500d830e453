package io.github.distlock.actuate;

import java.util.function.Supplier;

import io.github.distlock.actuate.DistributedLocksEndpoint.LockStoreUnavailableException;
import org.springframework.boot.actuate.endpoint.OperationResponseBody;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.Selector.Match;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.boot.actuate.endpoint.web.annotation.EndpointWebExtension;
import org.springframework.util.Assert;

/**
 * {@link DistributedLocksEndpoint} over HTTP: while the lock store cannot be read, a 503 with a short JSON
 * body ({@code error} and {@code reason}) instead of an error page, as Spring Boot's health
 * endpoint answers 503 when it is down. JMX keeps the endpoint's own operations, which throw
 * {@link LockStoreUnavailableException} with the reason in its message.
 */
@EndpointWebExtension(endpoint = DistributedLocksEndpoint.class)
public class DistributedLocksEndpointWebExtension {

    private final DistributedLocksEndpoint delegate;

    /**
     * Creates the extension.
     * @param delegate the endpoint that reads etcd
     */
    public DistributedLocksEndpointWebExtension(DistributedLocksEndpoint delegate) {
        Assert.notNull(delegate, "delegate must not be null");
        this.delegate = delegate;
    }

    /**
     * Every lock of the namespace that has a holder or a waiter.
     * @return the locks with status 200, or why the lock store cannot be read with status 503
     */
    @ReadOperation
    public WebEndpointResponse<OperationResponseBody> locks() {
        return respond(this.delegate::locks);
    }

    /**
     * One lock, held or not.
     * @param key the lock key, split at {@code /} by the request path
     * @return the lock with status 200, or why the lock store cannot be read with status 503
     */
    @ReadOperation
    public WebEndpointResponse<OperationResponseBody> lock(@Selector(match = Match.ALL_REMAINING) String[] key) {
        return respond(() -> this.delegate.lock(key));
    }

    private static WebEndpointResponse<OperationResponseBody> respond(Supplier<? extends OperationResponseBody> read) {
        try {
            return new WebEndpointResponse<>(read.get());
        }
        catch (LockStoreUnavailableException ex) {
            return new WebEndpointResponse<>(new UnavailableDescriptor("lock store unavailable", ex.getReason()),
                    WebEndpointResponse.STATUS_SERVICE_UNAVAILABLE);
        }
    }

    /**
     * The answer while the lock store cannot be read.
     * @param error always {@code lock store unavailable}
     * @param reason why, without endpoints or credentials
     */
    public record UnavailableDescriptor(String error, String reason) implements OperationResponseBody {
    }
}
