package io.github.distlock.autoconfigure.testcontainers;

import java.net.URI;
import java.util.List;

import io.github.distlock.autoconfigure.EtcdConnectionDetails;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.ssl.SslBundle;
import org.springframework.boot.testcontainers.service.connection.ContainerConnectionDetailsFactory;
import org.springframework.boot.testcontainers.service.connection.ContainerConnectionSource;
import org.testcontainers.containers.Container;
import org.testcontainers.containers.ContainerState;

/**
 * {@link EtcdConnectionDetails} for a Testcontainers {@code @ServiceConnection} etcd container.
 * Testcontainers has no etcd module, so any container type is accepted (a {@code GenericContainer},
 * jetcd's {@code EtcdContainer}, ...) whose connection name is one of {@link #CONNECTION_NAMES}:
 * the name given as {@code @ServiceConnection(name = "etcd")}, or else the repository of the
 * container's image ({@code quay.io/coreos/etcd:v3.5.21} is {@code coreos/etcd}). The client
 * connects to the port mapped to etcd's client port 2379, over https when the container is
 * annotated with an SSL bundle ({@code @PemKeyStore}, {@code @PemTrustStore}, ...).
 */
class EtcdContainerConnectionDetailsFactory
        extends ContainerConnectionDetailsFactory<Container<?>, EtcdConnectionDetails> {

    /** Connection names accepted: an explicit name, and the repositories of etcd's common images. */
    static final List<String> CONNECTION_NAMES = List.of("etcd", "coreos/etcd", "etcd-development/etcd",
            "bitnami/etcd");

    /** etcd's client port inside the container. */
    static final int CLIENT_PORT = 2379;

    EtcdContainerConnectionDetailsFactory() {
        super(CONNECTION_NAMES);
    }

    @Override
    protected EtcdConnectionDetails getContainerConnectionDetails(ContainerConnectionSource<Container<?>> source) {
        return new EtcdContainerConnectionDetails(source);
    }

    /**
     * The endpoint of an etcd container: its host and the port mapped to 2379.
     * @param container a started container
     * @param secure whether to connect with TLS
     * @return the endpoint URL
     */
    static URI endpoint(ContainerState container, boolean secure) {
        return URI.create(((secure) ? "https" : "http") + "://" + container.getHost() + ":"
                + container.getMappedPort(CLIENT_PORT));
    }

    /** {@link EtcdConnectionDetails} backed by a {@link ContainerConnectionSource}. */
    private static final class EtcdContainerConnectionDetails extends ContainerConnectionDetails<Container<?>>
            implements EtcdConnectionDetails {

        private EtcdContainerConnectionDetails(ContainerConnectionSource<Container<?>> source) {
            super(source);
        }

        @Override
        public List<URI> getEndpoints() {
            return List.of(endpoint(getContainer(), getSslBundle() != null));
        }

        @Override
        public @Nullable SslBundle getSslBundle() {
            return super.getSslBundle();
        }
    }
}
