package io.github.distlock.autoconfigure;

import java.nio.file.Path;
import java.util.List;

import io.etcd.jetcd.Client;
import io.github.distlock.autoconfigure.DistributedLockProperties.Etcd;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * Building the jetcd client: credentials and TLS files (see {@link TlsFiles}).
 */
class EtcdClientFactoryTests {

    private static final Path TLS = TlsFiles.directory();

    @Test
    void buildsAPlainClient() {
        Etcd etcd = new Etcd();
        etcd.setUsername("app");
        etcd.setPassword("secret");
        try (Client client = EtcdClientFactory.create(etcd)) {
            assertThat(client).isNotNull();
        }
    }

    @Test
    void buildsATlsClientFromPemFiles() {
        Etcd etcd = secure();
        etcd.getTls().setCaFile(TLS.resolve("ca.pem"));
        etcd.getTls().setCertFile(TLS.resolve("client.pem"));
        etcd.getTls().setKeyFile(TLS.resolve("client.key"));
        try (Client client = EtcdClientFactory.create(etcd)) {
            assertThat(client).isNotNull();
        }
    }

    @Test
    void httpsWithoutFilesTrustsTheJvmsAuthorities() {
        try (Client client = EtcdClientFactory.create(secure())) {
            assertThat(client).isNotNull();
        }
    }

    @Test
    void tlsFilesNeedHttpsEndpoints() {
        Etcd etcd = new Etcd();
        etcd.getTls().setCaFile(TLS.resolve("ca.pem"));
        assertThatIllegalStateException().isThrownBy(() -> EtcdClientFactory.create(etcd))
            .withMessage("distributed-lock.etcd.tls.* files are set but distributed-lock.etcd.endpoints use http://; "
                    + "use https:// endpoints to connect with TLS");
    }

    @Test
    void certificateAndKeyComeTogether() {
        Etcd etcd = secure();
        etcd.getTls().setCertFile(TLS.resolve("client.pem"));
        assertThatIllegalStateException().isThrownBy(() -> EtcdClientFactory.create(etcd))
            .withMessageContaining("distributed-lock.etcd.tls.cert-file and distributed-lock.etcd.tls.key-file must "
                    + "be set together, but only distributed-lock.etcd.tls.cert-file is set");
    }

    @Test
    void keyPasswordNeedsTheKeyFile() {
        Etcd etcd = secure();
        etcd.getTls().setCaFile(TLS.resolve("ca.pem"));
        etcd.getTls().setKeyPassword("key-secret");
        assertThatIllegalStateException().isThrownBy(() -> EtcdClientFactory.create(etcd))
            .withMessage("distributed-lock.etcd.tls.key-password is set but distributed-lock.etcd.tls.key-file is not: "
                    + "the password is for an encrypted key file")
            .withMessageNotContaining("key-secret");
    }

    @Test
    void keyPasswordAloneIsNotIgnored() {
        Etcd etcd = secure();
        etcd.getTls().setKeyPassword("key-secret");
        assertThatIllegalStateException().isThrownBy(() -> EtcdClientFactory.create(etcd))
            .withMessageStartingWith("distributed-lock.etcd.tls.key-password is set but distributed-lock.etcd.tls.key-file is not");
    }

    @Test
    void missingFileIsNamed() {
        Etcd etcd = secure();
        etcd.getTls().setCaFile(TLS.resolve("absent.pem"));
        assertThatIllegalStateException().isThrownBy(() -> EtcdClientFactory.create(etcd))
            .withMessage("distributed-lock.etcd.tls.ca-file is '" + TLS.resolve("absent.pem")
                    + "', which is not a readable file");
    }

    @Test
    void unreadablePemIsNamed() {
        Etcd etcd = secure();
        etcd.getTls().setCaFile(TLS.resolve("client.key"));
        assertThatIllegalStateException().isThrownBy(() -> EtcdClientFactory.create(etcd))
            .withMessageStartingWith("distributed-lock.etcd.tls.ca-file ('" + TLS.resolve("client.key")
                    + "') could not be loaded");
    }

    @Test
    void usernameNeedsAPassword() {
        Etcd etcd = new Etcd();
        etcd.setUsername("app");
        assertThatIllegalStateException().isThrownBy(() -> EtcdClientFactory.create(etcd))
            .withMessage("distributed-lock.etcd.username and distributed-lock.etcd.password must be set together, "
                    + "but only distributed-lock.etcd.username is set");
    }

    @Test
    void toStringHidesSecrets() {
        Etcd etcd = new Etcd();
        etcd.setUsername("app");
        etcd.setPassword("hunter2");
        etcd.getTls().setKeyPassword("key-secret");
        assertThat(etcd.toString()).contains("app").contains("******")
            .doesNotContain("hunter2")
            .doesNotContain("key-secret");
    }

    private static Etcd secure() {
        Etcd etcd = new Etcd();
        etcd.setEndpoints(List.of("https://127.0.0.1:2379"));
        return etcd;
    }
}
