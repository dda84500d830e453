package io.github.distlock.autoconfigure;

import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import javax.net.ssl.SSLException;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.ClientBuilder;
import io.grpc.netty.GrpcSslContexts;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import org.jspecify.annotations.Nullable;
import org.springframework.util.StringUtils;

/**
 * Builds the jetcd {@link Client} from {@code distributed-lock.etcd.*}. Never puts the password
 * into a message.
 */
final class EtcdClientFactory {

    private static final String TLS = "distributed-lock.etcd.tls.";

    private EtcdClientFactory() {
    }

    static Client create(DistributedLockProperties.Etcd etcd) {
        List<URI> endpoints = EtcdEndpoints.parse(etcd.getEndpoints());
        ClientBuilder builder = Client.builder()
            .endpoints(endpoints)
            .connectTimeout(etcd.getConnectTimeout())
            .keepaliveTime(etcd.getKeepAliveTime())
            .keepaliveTimeout(etcd.getKeepAliveTimeout())
            .keepaliveWithoutCalls(true);
        applyCredentials(builder, etcd.getUsername(), etcd.getPassword());
        SslContext sslContext = sslContext(EtcdEndpoints.isSecure(endpoints), etcd.getTls());
        if (sslContext != null) {
            builder.sslContext(sslContext);
        }
        return builder.build();
    }

    private static void applyCredentials(ClientBuilder builder, @Nullable String username, @Nullable String password) {
        boolean hasUser = StringUtils.hasLength(username);
        PropertyChecks.together("distributed-lock.etcd.username", hasUser, "distributed-lock.etcd.password",
                StringUtils.hasLength(password));
        if (hasUser) {
            builder.user(ByteSequence.from(username, StandardCharsets.UTF_8))
                .password(ByteSequence.from(password, StandardCharsets.UTF_8));
        }
    }

    private static @Nullable SslContext sslContext(boolean secure, DistributedLockProperties.Tls tls) {
        boolean filesSet = tls.getCaFile() != null || tls.getCertFile() != null || tls.getKeyFile() != null;
        if (!secure) {
            if (filesSet) {
                throw new IllegalStateException(TLS + "* files are set but " + EtcdEndpoints.PROPERTY
                        + " use http://; use https:// endpoints to connect with TLS");
            }
            return null;
        }
        Path certFile = tls.getCertFile();
        Path keyFile = tls.getKeyFile();
        PropertyChecks.together(TLS + "cert-file", certFile != null, TLS + "key-file", keyFile != null);
        SslContextBuilder builder = GrpcSslContexts.forClient();
        if (tls.getCaFile() != null) {
            try (InputStream ca = open("ca-file", tls.getCaFile())) {
                builder.trustManager(ca);
            }
            catch (IOException | IllegalArgumentException ex) {
                throw invalidFile("ca-file", tls.getCaFile(), ex);
            }
        }
        if (certFile != null && keyFile != null) {
            try (InputStream cert = open("cert-file", certFile); InputStream key = open("key-file", keyFile)) {
                builder.keyManager(cert, key, tls.getKeyPassword());
            }
            catch (IOException | IllegalArgumentException ex) {
                throw invalidFile("cert-file/key-file", certFile + ", " + keyFile, ex);
            }
        }
        try {
            return builder.build();
        }
        catch (SSLException ex) {
            throw new IllegalStateException("Could not set up TLS from " + TLS + "*: " + ex.getMessage(), ex);
        }
    }

    private static InputStream open(String property, Path file) {
        if (!Files.isRegularFile(file) || !Files.isReadable(file)) {
            throw new IllegalStateException(TLS + property + " is '" + file + "', which is not a readable file");
        }
        try {
            return Files.newInputStream(file);
        }
        catch (IOException ex) {
            throw invalidFile(property, file, ex);
        }
    }

    private static IllegalStateException invalidFile(String property, Object file, Exception cause) {
        return new IllegalStateException(TLS + property + " ('" + file + "') could not be loaded: "
                + cause.getMessage(), cause);
    }
}
