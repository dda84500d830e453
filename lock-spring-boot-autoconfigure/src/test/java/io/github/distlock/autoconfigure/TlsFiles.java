package io.github.distlock.autoconfigure;

import java.net.URISyntaxException;
import java.net.URL;
import java.nio.file.Path;

/**
 * The test PEM files under {@code tls/} on the test class path: {@code ca.pem} (a test CA),
 * {@code server.pem}/{@code server.key} (for 127.0.0.1 and localhost) and
 * {@code client.pem}/{@code client.key} (a client certificate), all issued by the CA, with
 * PKCS#8 keys. Made with openssl, valid until 2126; the CA's key was not kept.
 */
final class TlsFiles {

    private TlsFiles() {
    }

    static Path directory() {
        URL ca = TlsFiles.class.getResource("/tls/ca.pem");
        if (ca == null) {
            throw new IllegalStateException("tls/ca.pem is not on the test class path");
        }
        try {
            return Path.of(ca.toURI()).getParent();
        }
        catch (URISyntaxException ex) {
            throw new IllegalStateException(ex);
        }
    }
}
