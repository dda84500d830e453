package io.github.distlock.autoconfigure.docker.compose;

import java.net.URI;
import java.util.Map;

import io.github.distlock.autoconfigure.EtcdConnectionDetails;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.docker.compose.core.RunningService;
import org.springframework.boot.docker.compose.service.connection.TestDockerComposeConnectionSources;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Which Docker Compose services {@link EtcdDockerComposeConnectionDetailsFactory} accepts, and
 * the connection it reads from them, on {@link RunningService} doubles ({@link StubRunningService})
 * instead of Docker.
 */
class EtcdDockerComposeConnectionDetailsFactoryTests {

    private final EtcdDockerComposeConnectionDetailsFactory factory = new EtcdDockerComposeConnectionDetailsFactory();

    @ParameterizedTest
    @ValueSource(strings = { "quay.io/coreos/etcd:v3.5.21", "gcr.io/etcd-development/etcd:v3.5.21",
            "bitnami/etcd:3.5", "etcd", "registry.k8s.io/etcd:3.5.21-0" })
    void acceptsServicesOfEtcdImages(String image) {
        EtcdConnectionDetails details = detailsFor(new StubRunningService("docker-host", image, Map.of(), Map.of(), Map.of(2379, 32790)));
        assertThat(details).isNotNull();
        assertThat(details.getEndpoints()).containsExactly(URI.create("http://docker-host:32790"));
        assertThat(details.getUsername()).isNull();
        assertThat(details.getPassword()).isNull();
        assertThat(details.getSslBundle()).isNull();
    }

    @Test
    void acceptsAServiceLabelledEtcd() {
        StubRunningService service = new StubRunningService("docker-host", "example.org/team/kv-store:1",
                Map.of("org.springframework.boot.service-connection", "etcd"), Map.of(), Map.of(2379, 40001));
        assertThat(detailsFor(service).getEndpoints()).containsExactly(URI.create("http://docker-host:40001"));
    }

    @ParameterizedTest
    @ValueSource(strings = { "redis:7", "zookeeper:3.9", "example.org/etcd-operator:1" })
    void ignoresOtherServices(String image) {
        assertThat(detailsFor(new StubRunningService("docker-host", image, Map.of(), Map.of(), Map.of(2379, 32790)))).isNull();
    }

    @Test
    void bitnamisRootPasswordGivesTheRootUser() {
        EtcdConnectionDetails details = detailsFor(new StubRunningService("docker-host", "bitnami/etcd:3.5", Map.of(),
                Map.of("ETCD_ROOT_PASSWORD", "s3cret"), Map.of(2379, 32790)));
        assertThat(details.getUsername()).isEqualTo("root");
        assertThat(details.getPassword()).isEqualTo("s3cret");
    }

    @Test
    void rootPasswordOfAnotherImageIsNotTakenForCredentials() {
        EtcdConnectionDetails details = detailsFor(new StubRunningService("docker-host", "quay.io/coreos/etcd:v3.5.21", Map.of(),
                Map.of("ETCD_ROOT_PASSWORD", "s3cret"), Map.of(2379, 32790)));
        assertThat(details.getUsername()).isNull();
        assertThat(details.getPassword()).isNull();
    }

    @Test
    void connectsWithTlsWhenTheServiceHasSslBundleLabels() {
        EtcdConnectionDetails details = detailsFor(new StubRunningService("docker-host", "quay.io/coreos/etcd:v3.5.21",
                Map.of("org.springframework.boot.sslbundle.pem.truststore.certificate", "classpath:tls/ca.pem"),
                Map.of(), Map.of(2379, 32791)));
        assertThat(details.getSslBundle()).isNotNull();
        assertThat(details.getEndpoints()).containsExactly(URI.create("https://docker-host:32791"));
    }

    private EtcdConnectionDetails detailsFor(RunningService service) {
        return this.factory.getConnectionDetails(TestDockerComposeConnectionSources.of(service));
    }
}
