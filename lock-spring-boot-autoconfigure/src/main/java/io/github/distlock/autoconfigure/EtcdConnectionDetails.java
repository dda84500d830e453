package io.github.distlock.autoconfigure;

import java.net.URI;
import java.util.List;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.autoconfigure.service.connection.ConnectionDetails;
import org.springframework.boot.ssl.SslBundle;

/**
 * Where and how the etcd lock store connects: the details of a connection to an etcd cluster, as
 * Spring Boot's {@link ConnectionDetails} are for the stores it configures itself.
 *
 * <p>The auto-configuration builds the jetcd client from the {@code EtcdConnectionDetails} bean.
 * Without one of the application's, it defines one from {@code distributed-lock.etcd.endpoints},
 * {@code .username}, {@code .password} and {@code .tls.*}. A bean of the application replaces
 * those properties; so do the details that Spring Boot derives from a Testcontainers
 * {@code @ServiceConnection} etcd container or a Docker Compose etcd service. The client's
 * timeouts and keep-alive settings still come from {@code distributed-lock.etcd.*}.
 *
 * @see org.springframework.boot.autoconfigure.service.connection.ConnectionDetailsFactory
 */
public interface EtcdConnectionDetails extends ConnectionDetails {

    /**
     * The client URLs of the etcd members, such as {@code http://127.0.0.1:2379}: all {@code http},
     * or all {@code https} to connect with TLS, each with a host and no path, query or credentials.
     * @return at least one member URL
     */
    List<URI> getEndpoints();

    /**
     * The etcd user to authenticate as, or {@code null} for a cluster without authentication.
     * Given together with {@link #getPassword()}.
     * @return the user name or {@code null}
     */
    default @Nullable String getUsername() {
        return null;
    }

    /**
     * The password of {@link #getUsername() the user}, or {@code null} when there is none.
     * @return the password or {@code null}
     */
    default @Nullable String getPassword() {
        return null;
    }

    /**
     * The trust material (and, for members that require client certificates, the client's key and
     * certificate) for {@code https} endpoints, or {@code null}: {@code https} endpoints are then
     * verified with the JVM's trusted authorities. Only used with {@code https} endpoints.
     * @return the SSL bundle or {@code null}
     */
    default @Nullable SslBundle getSslBundle() {
        return null;
    }
}
