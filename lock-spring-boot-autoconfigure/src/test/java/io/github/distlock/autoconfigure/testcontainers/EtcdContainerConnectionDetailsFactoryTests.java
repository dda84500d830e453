package io.github.distlock.autoconfigure.testcontainers;

import java.lang.reflect.Field;
import java.net.URI;
import java.util.Map;

import io.github.distlock.autoconfigure.EtcdConnectionDetails;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.beans.factory.InitializingBean;
import org.springframework.boot.testcontainers.service.connection.ContainerConnectionSource;
import org.springframework.boot.testcontainers.service.connection.PemTrustStore;
import org.springframework.boot.testcontainers.service.connection.ServiceConnection;
import org.springframework.boot.testcontainers.service.connection.TestContainerConnectionSources;
import org.testcontainers.containers.Container;
import org.testcontainers.containers.GenericContainer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Which {@code @ServiceConnection} containers {@link EtcdContainerConnectionDetailsFactory}
 * accepts, and the endpoints it reads from them, on stub containers instead of Docker.
 */
class EtcdContainerConnectionDetailsFactoryTests {

    private final EtcdContainerConnectionDetailsFactory factory = new EtcdContainerConnectionDetailsFactory();

    @ServiceConnection
    static GenericContainer<?> unnamed;

    @ServiceConnection("etcd")
    static GenericContainer<?> named;

    @ServiceConnection
    @PemTrustStore(certificate = "classpath:tls/ca.pem")
    static GenericContainer<?> secured;

    @ParameterizedTest
    @ValueSource(strings = { "quay.io/coreos/etcd:v3.5.21", "gcr.io/etcd-development/etcd:v3.5.21",
            "bitnami/etcd:3.5", "etcd:3.4" })
    void acceptsContainersOfEtcdImages(String image) throws Exception {
        EtcdConnectionDetails details = detailsFor("unnamed", image, Map.of(2379, 32790));
        assertThat(details).isNotNull();
        assertThat(details.getEndpoints()).containsExactly(URI.create("http://docker-host:32790"));
        assertThat(details.getUsername()).isNull();
        assertThat(details.getPassword()).isNull();
        assertThat(details.getSslBundle()).isNull();
    }

    @Test
    void acceptsAnyImageNamedEtcd() throws Exception {
        EtcdConnectionDetails details = detailsFor("named", "example.org/team/kv-store:1", Map.of(2379, 40001));
        assertThat(details.getEndpoints()).containsExactly(URI.create("http://docker-host:40001"));
    }

    @ParameterizedTest
    @ValueSource(strings = { "redis:7", "zookeeper:3.9", "example.org/etcd-operator:1", "postgres:17" })
    void ignoresOtherImages(String image) throws Exception {
        assertThat(detailsFor("unnamed", image, Map.of(2379, 32790))).isNull();
    }

    @Test
    void connectsWithTlsWhenTheContainerHasAnSslBundle() throws Exception {
        EtcdConnectionDetails details = detailsFor("secured", "quay.io/coreos/etcd:v3.5.21", Map.of(2379, 32791));
        assertThat(details.getSslBundle()).isNotNull();
        assertThat(details.getSslBundle().getStores().getTrustStore().size()).isEqualTo(1);
        assertThat(details.getEndpoints()).containsExactly(URI.create("https://docker-host:32791"));
    }

    private EtcdConnectionDetails detailsFor(String fieldName, String image, Map<Integer, Integer> ports)
            throws Exception {
        Field field = getClass().getDeclaredField(fieldName);
        Container<?> container = StubContainer.of("docker-host", ports);
        ContainerConnectionSource<Container<?>> source = TestContainerConnectionSources.of(field,
                GenericContainer.class, image, container);
        EtcdConnectionDetails details = this.factory.getConnectionDetails(source);
        if (details instanceof InitializingBean bean) {
            // What the application context does with the details bean before anything reads it.
            bean.afterPropertiesSet();
        }
        return details;
    }
}
