package io.github.distlock.autoconfigure;

import java.lang.reflect.Field;
import java.net.URI;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import io.github.distlock.FencedLock;
import io.github.distlock.LockRegistry;
import io.github.distlock.autoconfigure.docker.compose.StubRunningService;
import io.github.distlock.autoconfigure.testcontainers.StubContainer;
import io.github.distlock.testsupport.EtcdClusterExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.service.connection.ConnectionDetails;
import org.springframework.boot.autoconfigure.service.connection.ConnectionDetailsFactories;
import org.springframework.boot.docker.compose.service.connection.TestDockerComposeConnectionSources;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.testcontainers.service.connection.PemKeyStore;
import org.springframework.boot.testcontainers.service.connection.PemTrustStore;
import org.springframework.boot.testcontainers.service.connection.ServiceConnection;
import org.springframework.boot.testcontainers.service.connection.TestContainerConnectionSources;
import org.testcontainers.containers.GenericContainer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The connection details factories, found as Spring Boot finds them (through
 * {@code META-INF/spring.factories}), configure the lock store with no {@code distributed-lock.*}
 * properties: a {@code @ServiceConnection} etcd container (a stub that maps 2379 to a real etcd
 * started here, since this machine has no Docker), with TLS and a client certificate from its
 * SSL annotations, and a Docker Compose etcd service.
 */
class ServiceConnectionIntegrationTests {

    @RegisterExtension
    static final EtcdClusterExtension etcd = EtcdClusterExtension.single();

    private static TlsEtcdServer tlsEtcd;

    @ServiceConnection
    static GenericContainer<?> plain;

    @ServiceConnection
    @PemKeyStore(certificate = "classpath:tls/client.pem", privateKey = "classpath:tls/client.key")
    @PemTrustStore(certificate = "classpath:tls/ca.pem")
    static GenericContainer<?> secured;

    private final ConnectionDetailsFactories factories = new ConnectionDetailsFactories(getClass().getClassLoader());

    private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(DistributedLockAutoConfiguration.class))
        // The default endpoint may well have an etcd behind it: make sure the details are used.
        .withPropertyValues("distributed-lock.etcd.endpoints=http://127.0.0.1:1");

    @BeforeAll
    static void startTlsEtcd() {
        tlsEtcd = TlsEtcdServer.start();
    }

    @AfterAll
    static void stopTlsEtcd() {
        if (tlsEtcd != null) {
            tlsEtcd.close();
        }
    }

    @Test
    void locksOnAServiceConnectionContainer() throws Exception {
        URI real = URI.create(etcd.cluster().clientEndpoint());
        EtcdConnectionDetails details = containerDetails("plain", real);
        assertLocks(details, URI.create("http://" + real.getHost() + ":" + real.getPort()));
    }

    @Test
    void locksOverTlsOnAServiceConnectionContainerWithSslAnnotations() throws Exception {
        URI real = URI.create(tlsEtcd.endpoint());
        EtcdConnectionDetails details = containerDetails("secured", real);
        assertLocks(details, URI.create("https://" + real.getHost() + ":" + real.getPort()));
    }

    @Test
    void locksOnADockerComposeService() {
        URI real = URI.create(etcd.cluster().clientEndpoint());
        StubRunningService service = new StubRunningService(real.getHost(), "gcr.io/etcd-development/etcd:v3.5.21", Map.of(), Map.of(),
                Map.of(2379, real.getPort()));
        EtcdConnectionDetails details = only(
                this.factories.getConnectionDetails(TestDockerComposeConnectionSources.of(service), true));
        assertLocks(details, URI.create("http://" + real.getHost() + ":" + real.getPort()));
    }

    private EtcdConnectionDetails containerDetails(String fieldName, URI real) throws Exception {
        Field field = getClass().getDeclaredField(fieldName);
        var source = TestContainerConnectionSources.of(field, GenericContainer.class, "quay.io/coreos/etcd:v3.5.21",
                StubContainer.of(real.getHost(), Map.of(2379, real.getPort())));
        return only(this.factories.getConnectionDetails(source, true));
    }

    private static EtcdConnectionDetails only(Map<Class<?>, ConnectionDetails> found) {
        assertThat(found).containsOnlyKeys(EtcdConnectionDetails.class);
        return (EtcdConnectionDetails) found.get(EtcdConnectionDetails.class);
    }

    private void assertLocks(EtcdConnectionDetails details, URI expectedEndpoint) {
        this.contextRunner.withBean(EtcdConnectionDetails.class, () -> details).run((context) -> {
            assertThat(context).hasNotFailed().doesNotHaveBean(PropertiesEtcdConnectionDetails.class);
            assertThat(details.getEndpoints()).containsExactly(expectedEndpoint);
            FencedLock lock = context.getBean(LockRegistry.class).obtain("service-connection");
            assertThat(lock.tryLock(5, TimeUnit.SECONDS)).isTrue();
            try {
                assertThat(lock.getFence()).isPositive();
            }
            finally {
                lock.unlock();
            }
        });
    }
}
