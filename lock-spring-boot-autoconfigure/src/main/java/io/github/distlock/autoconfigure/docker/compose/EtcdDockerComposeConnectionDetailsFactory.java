package io.github.distlock.autoconfigure.docker.compose;

import java.net.URI;
import java.util.List;

import io.github.distlock.autoconfigure.EtcdConnectionDetails;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.docker.compose.core.RunningService;
import org.springframework.boot.docker.compose.service.connection.DockerComposeConnectionDetailsFactory;
import org.springframework.boot.docker.compose.service.connection.DockerComposeConnectionSource;
import org.springframework.boot.ssl.SslBundle;

/**
 * {@link EtcdConnectionDetails} for a Docker Compose service that runs etcd: a service whose image
 * is {@code quay.io/coreos/etcd}, {@code gcr.io/etcd-development/etcd}, {@code bitnami/etcd} or
 * {@code etcd}, or that carries the label {@code org.springframework.boot.service-connection: etcd}.
 * The client connects to the port published for 2379, over https when the service has Spring
 * Boot's SSL bundle labels ({@code org.springframework.boot.sslbundle.pem.*} or
 * {@code .jks.*}). For the Bitnami image, {@code ETCD_ROOT_PASSWORD} in the service's
 * environment (which switches authentication on) gives the credentials of the {@code root} user.
 */
class EtcdDockerComposeConnectionDetailsFactory extends DockerComposeConnectionDetailsFactory<EtcdConnectionDetails> {

    private static final String[] CONNECTION_NAMES = { "etcd", "coreos/etcd", "etcd-development/etcd",
            "bitnami/etcd" };

    private static final int CLIENT_PORT = 2379;

    EtcdDockerComposeConnectionDetailsFactory() {
        super(CONNECTION_NAMES);
    }

    @Override
    protected EtcdConnectionDetails getDockerComposeConnectionDetails(DockerComposeConnectionSource source) {
        return new EtcdDockerComposeConnectionDetails(source.getRunningService());
    }

    /** {@link EtcdConnectionDetails} backed by an etcd {@link RunningService}. */
    static final class EtcdDockerComposeConnectionDetails extends DockerComposeConnectionDetails
            implements EtcdConnectionDetails {

        private final List<URI> endpoints;

        private final @Nullable String username;

        private final @Nullable String password;

        private final @Nullable SslBundle sslBundle;

        EtcdDockerComposeConnectionDetails(RunningService service) {
            super(service);
            this.sslBundle = getSslBundle(service);
            this.endpoints = List.of(URI.create(((this.sslBundle != null) ? "https" : "http") + "://"
                    + service.host() + ":" + service.ports().get(CLIENT_PORT)));
            String rootPassword = service.env().get("ETCD_ROOT_PASSWORD");
            boolean bitnamiAuth = "bitnami/etcd".equals(service.image().getName()) && rootPassword != null
                    && !rootPassword.isEmpty();
            this.username = (bitnamiAuth) ? "root" : null;
            this.password = (bitnamiAuth) ? rootPassword : null;
        }

        @Override
        public List<URI> getEndpoints() {
            return this.endpoints;
        }

        @Override
        public @Nullable String getUsername() {
            return this.username;
        }

        @Override
        public @Nullable String getPassword() {
            return this.password;
        }

        @Override
        public @Nullable SslBundle getSslBundle() {
            return this.sslBundle;
        }
    }
}
