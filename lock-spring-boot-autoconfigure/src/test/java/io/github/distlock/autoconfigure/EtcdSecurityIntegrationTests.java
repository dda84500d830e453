package io.github.distlock.autoconfigure;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import io.etcd.jetcd.Auth;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.github.distlock.LockAcquisitionException;
import io.github.distlock.LockContext;
import io.github.distlock.annotation.DistributedLock;
import io.github.distlock.testsupport.EtcdClusterExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Locks through an etcd that requires a user and password, and through one that serves only
 * TLS with client certificates, configured with nothing but {@code distributed-lock.etcd.*}.
 */
class EtcdSecurityIntegrationTests {

    @RegisterExtension
    static final EtcdClusterExtension etcd = EtcdClusterExtension.single();

    private static final String PASSWORD = "Pa55-word-in-test";

    private static TlsEtcdServer tlsEtcd;

    private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(DistributedLockAutoConfiguration.class))
        .withUserConfiguration(LockedJob.class);

    @BeforeAll
    static void secureEtcd() throws Exception {
        try (Client admin = etcd.newClient()) {
            Auth auth = admin.getAuthClient();
            ByteSequence root = bytes("root");
            auth.roleAdd(root).get(10, TimeUnit.SECONDS);
            auth.userAdd(root, bytes(PASSWORD)).get(10, TimeUnit.SECONDS);
            auth.userGrantRole(root, root).get(10, TimeUnit.SECONDS);
            auth.authEnable().get(10, TimeUnit.SECONDS);
        }
        tlsEtcd = TlsEtcdServer.start();
    }

    @AfterAll
    static void stopTlsEtcd() {
        if (tlsEtcd != null) {
            tlsEtcd.close();
        }
    }

    @Test
    void locksWithUsernameAndPassword() {
        this.contextRunner.withPropertyValues(endpoints(), "distributed-lock.etcd.username=root",
                "distributed-lock.etcd.password=" + PASSWORD)
            .run((context) -> assertThat(context.getBean(Job.class).run()).isPositive());
    }

    @Test
    void wrongPasswordFailsTheCallWithoutShowingIt() {
        this.contextRunner.withPropertyValues(endpoints(), "distributed-lock.etcd.username=root",
                "distributed-lock.etcd.password=not-" + PASSWORD)
            .run((context) -> assertThatExceptionOfType(LockAcquisitionException.class)
                .isThrownBy(() -> context.getBean(Job.class).run())
                .satisfies((ex) -> assertThat(ex).hasMessageContaining("'job'")
                    .hasStackTraceContaining("authentication failed")
                    .satisfies((failure) -> assertThat(stackTraceOf(failure)).doesNotContain(PASSWORD))));
    }

    @Test
    void locksOverTlsWithAClientCertificate() {
        Path tls = TlsFiles.directory();
        this.contextRunner
            .withPropertyValues("distributed-lock.etcd.endpoints=" + tlsEtcd.endpoint(),
                    "distributed-lock.etcd.tls.ca-file=" + tls.resolve("ca.pem"),
                    "distributed-lock.etcd.tls.cert-file=" + tls.resolve("client.pem"),
                    "distributed-lock.etcd.tls.key-file=" + tls.resolve("client.key"))
            .run((context) -> assertThat(context.getBean(Job.class).run()).isPositive());
    }

    @Test
    void tlsWithoutTheClientCertificateIsRefused() {
        this.contextRunner
            .withPropertyValues("distributed-lock.etcd.endpoints=" + tlsEtcd.endpoint(),
                    "distributed-lock.etcd.tls.ca-file=" + TlsFiles.directory().resolve("ca.pem"))
            .run((context) -> assertThatExceptionOfType(LockAcquisitionException.class)
                .isThrownBy(() -> context.getBean(Job.class).run()));
    }

    private static String endpoints() {
        return "distributed-lock.etcd.endpoints=" + String.join(",", etcd.clientEndpoints());
    }

    private static ByteSequence bytes(String text) {
        return ByteSequence.from(text, StandardCharsets.UTF_8);
    }

    private static String stackTraceOf(Throwable failure) {
        java.io.StringWriter text = new java.io.StringWriter();
        failure.printStackTrace(new java.io.PrintWriter(text));
        return text.toString();
    }

    @Configuration(proxyBeanMethods = false)
    static class LockedJob {

        @Bean
        Job job() {
            return new Job();
        }
    }

    static class Job {

        @DistributedLock(key = "'job'", waitTimeout = "3s")
        public long run() {
            return LockContext.currentFence();
        }
    }
}
