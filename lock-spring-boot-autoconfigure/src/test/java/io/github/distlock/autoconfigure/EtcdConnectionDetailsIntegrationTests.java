package io.github.distlock.autoconfigure;

import java.net.URI;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.github.distlock.FencedLock;
import io.github.distlock.LockAcquisitionException;
import io.github.distlock.LockRegistry;
import io.github.distlock.testsupport.EtcdClusterExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.ssl.SslBundle;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The jetcd client connects where the {@link EtcdConnectionDetails} bean says: an application's
 * bean replaces {@code distributed-lock.etcd.endpoints} and the credentials, and without one the
 * properties are the details.
 */
class EtcdConnectionDetailsIntegrationTests {

    @RegisterExtension
    static final EtcdClusterExtension etcd = EtcdClusterExtension.single();

    /** Nothing listens there: a client that used the properties could not lock. */
    private static final String WRONG_ENDPOINT = "http://127.0.0.1:1";

    private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(DistributedLockAutoConfiguration.class))
        .withPropertyValues("distributed-lock.etcd.endpoints=" + WRONG_ENDPOINT,
                "distributed-lock.etcd.request-timeout=2s");

    @Test
    void aDetailsBeanOverridesTheProperties() {
        this.contextRunner.withUserConfiguration(RealEtcdDetails.class).run((context) -> {
            assertThat(context).hasSingleBean(EtcdConnectionDetails.class)
                .doesNotHaveBean(PropertiesEtcdConnectionDetails.class);
            FencedLock lock = context.getBean(LockRegistry.class).obtain("connection-details");
            assertThat(lock.tryLock(5, TimeUnit.SECONDS)).isTrue();
            try {
                assertThat(lock.getFence()).isPositive();
                assertThat(lock.isLocked()).isTrue();
            }
            finally {
                lock.unlock();
            }
        });
    }

    @Test
    void withoutABeanThePropertiesAreTheDetails() {
        this.contextRunner.run((context) -> {
            assertThat(context).hasSingleBean(PropertiesEtcdConnectionDetails.class);
            assertThat(context.getBean(EtcdConnectionDetails.class).getEndpoints())
                .containsExactly(URI.create(WRONG_ENDPOINT));
            FencedLock lock = context.getBean(LockRegistry.class).obtain("connection-details");
            assertThatExceptionOfType(LockAcquisitionException.class)
                .isThrownBy(() -> lock.tryLock(1, TimeUnit.SECONDS))
                .withMessageContaining(WRONG_ENDPOINT);
        });
    }

    @Test
    void aBeanWithAUserButNoPasswordFailsStartUp() {
        this.contextRunner.withBean(EtcdConnectionDetails.class, () -> new EtcdConnectionDetails() {

            @Override
            public List<URI> getEndpoints() {
                return realEndpoints();
            }

            @Override
            public String getUsername() {
                return "root";
            }
        }).run((context) -> assertThat(context).getFailure()
            .rootCause()
            .isInstanceOf(IllegalStateException.class)
            .hasMessageStartingWith("EtcdConnectionDetails (")
            .hasMessageEndingWith(" gives a user name but no password; etcd authentication needs both"));
    }

    @Test
    void aBeanWithAnSslBundleNeedsHttpsEndpoints() {
        this.contextRunner.withBean(EtcdConnectionDetails.class, () -> new EtcdConnectionDetails() {

            @Override
            public List<URI> getEndpoints() {
                return realEndpoints();
            }

            @Override
            public SslBundle getSslBundle() {
                return SslBundle.systemDefault();
            }
        }).run((context) -> assertThat(context).getFailure()
            .rootCause()
            .hasMessageEndingWith(" gives an SSL bundle but http:// endpoints; use https:// endpoints to connect with TLS"));
    }

    @Test
    void aBeansEndpointsAreChecked() {
        this.contextRunner
            .withBean(EtcdConnectionDetails.class, () -> () -> List.of(URI.create("tcp://127.0.0.1:2379")))
            .run((context) -> assertThat(context).getFailure()
                .rootCause()
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("EtcdConnectionDetails (")
                .hasMessageEndingWith("contains 'tcp://127.0.0.1:2379', which is not a valid etcd member URL: "
                        + "the scheme must be http or https, as in http://127.0.0.1:2379"));
    }

    private static List<URI> realEndpoints() {
        return etcd.clientEndpoints().stream().map(URI::create).toList();
    }

    @Configuration(proxyBeanMethods = false)
    static class RealEtcdDetails {

        @Bean
        EtcdConnectionDetails etcdConnectionDetails() {
            return EtcdConnectionDetailsIntegrationTests::realEndpoints;
        }
    }
}
