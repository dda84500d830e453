package io.github.distlock.autoconfigure;

import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import io.github.distlock.autoconfigure.DistributedLockProperties.Etcd;
import io.github.distlock.autoconfigure.DistributedLockProperties.Tls;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.ssl.SslBundle;
import org.springframework.boot.ssl.SslBundleKey;
import org.springframework.boot.ssl.pem.PemSslStore;
import org.springframework.boot.ssl.pem.PemSslStoreBundle;
import org.springframework.boot.ssl.pem.PemSslStoreDetails;
import org.springframework.util.StringUtils;

/**
 * {@link EtcdConnectionDetails} from {@code distributed-lock.etcd.*}: the endpoints, the
 * credentials and the PEM files of {@code distributed-lock.etcd.tls}, checked as they are read,
 * with messages that name the property.
 */
final class PropertiesEtcdConnectionDetails implements EtcdConnectionDetails {

    private static final String TLS = "distributed-lock.etcd.tls.";

    private final Etcd etcd;

    PropertiesEtcdConnectionDetails(Etcd etcd) {
        this.etcd = etcd;
    }

    @Override
    public List<URI> getEndpoints() {
        return EtcdEndpoints.parse(this.etcd.getEndpoints());
    }

    @Override
    public @Nullable String getUsername() {
        checkCredentials();
        return this.etcd.getUsername();
    }

    @Override
    public @Nullable String getPassword() {
        checkCredentials();
        return this.etcd.getPassword();
    }

    /**
     * The PEM files of {@code distributed-lock.etcd.tls} as a bundle, or {@code null} when none is
     * set.
     * @throws IllegalStateException naming the property, if files are set for {@code http}
     * endpoints, only one of certificate and key is set, a key password without a key file, or a
     * file is missing or not PEM
     */
    @Override
    public @Nullable SslBundle getSslBundle() {
        Tls tls = this.etcd.getTls();
        if (tls.getKeyPassword() != null && tls.getKeyFile() == null) {
            // Otherwise silently unused: the connection would be attempted without the client key it was meant for.
            throw new IllegalStateException(TLS + "key-password is set but " + TLS
                    + "key-file is not: the password is for an encrypted key file");
        }
        boolean filesSet = tls.getCaFile() != null || tls.getCertFile() != null || tls.getKeyFile() != null;
        if (!filesSet) {
            return null;
        }
        if (!EtcdEndpoints.isSecure(getEndpoints())) {
            throw new IllegalStateException(TLS + "* files are set but " + EtcdEndpoints.PROPERTY
                    + " use http://; use https:// endpoints to connect with TLS");
        }
        Path certFile = tls.getCertFile();
        Path keyFile = tls.getKeyFile();
        PropertyChecks.together(TLS + "cert-file", certFile != null, TLS + "key-file", keyFile != null);
        PemSslStore trustStore = null;
        if (tls.getCaFile() != null) {
            trustStore = load("ca-file", tls.getCaFile(),
                    PemSslStoreDetails.forCertificates(location("ca-file", tls.getCaFile())));
        }
        PemSslStore keyStore = null;
        if (certFile != null && keyFile != null) {
            PemSslStoreDetails details = PemSslStoreDetails.forCertificates(location("cert-file", certFile))
                .withPrivateKey(location("key-file", keyFile))
                .withPrivateKeyPassword(tls.getKeyPassword());
            keyStore = load("cert-file/key-file", certFile + ", " + keyFile, details);
        }
        return SslBundle.of(new PemSslStoreBundle(keyStore, trustStore), SslBundleKey.NONE);
    }

    private void checkCredentials() {
        PropertyChecks.together("distributed-lock.etcd.username", StringUtils.hasLength(this.etcd.getUsername()),
                "distributed-lock.etcd.password", StringUtils.hasLength(this.etcd.getPassword()));
    }

    private static String location(String property, Path file) {
        if (!Files.isRegularFile(file) || !Files.isReadable(file)) {
            throw new IllegalStateException(TLS + property + " is '" + file + "', which is not a readable file");
        }
        return file.toAbsolutePath().toUri().toString();
    }

    private static PemSslStore load(String property, Object files, PemSslStoreDetails details) {
        try {
            PemSslStore store = PemSslStore.load(details);
            if (store == null || store.certificates() == null || store.certificates().isEmpty()) {
                throw new IllegalStateException("no certificate found");
            }
            return store;
        }
        catch (RuntimeException ex) {
            throw new IllegalStateException(TLS + property + " ('" + files + "') could not be loaded: "
                    + ex.getMessage(), ex);
        }
    }
}
