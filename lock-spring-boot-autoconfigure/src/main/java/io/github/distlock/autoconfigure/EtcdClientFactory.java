package io.github.distlock.autoconfigure;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;

import javax.net.ssl.SSLException;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.ClientBuilder;
import io.grpc.netty.GrpcSslContexts;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.ssl.SslBundle;
import org.springframework.boot.ssl.SslOptions;
import org.springframework.util.StringUtils;

/**
 * Builds the jetcd {@link Client} from {@link EtcdConnectionDetails} (where to connect, as whom,
 * with which TLS material) and {@code distributed-lock.etcd.*} (timeouts and keep-alive). Never
 * puts the password into a message.
 */
final class EtcdClientFactory {

    private EtcdClientFactory() {
    }

    /** A client configured by {@code distributed-lock.etcd.*} alone. */
    static Client create(DistributedLockProperties.Etcd etcd) {
        return create(new PropertiesEtcdConnectionDetails(etcd), etcd);
    }

    static Client create(EtcdConnectionDetails details, DistributedLockProperties.Etcd etcd) {
        String source = describe(details);
        List<URI> endpoints = EtcdEndpoints.check(details.getEndpoints(), source);
        ClientBuilder builder = Client.builder()
            .endpoints(endpoints)
            .connectTimeout(etcd.getConnectTimeout())
            .keepaliveTime(etcd.getKeepAliveTime())
            .keepaliveTimeout(etcd.getKeepAliveTimeout())
            .keepaliveWithoutCalls(true);
        applyCredentials(builder, details.getUsername(), details.getPassword(), source);
        SslContext sslContext = sslContext(EtcdEndpoints.isSecure(endpoints), details.getSslBundle(), source);
        if (sslContext != null) {
            builder.sslContext(sslContext);
        }
        return builder.build();
    }

    /** The endpoints as the registry and messages show them. */
    static List<String> endpoints(EtcdConnectionDetails details) {
        return EtcdEndpoints.check(details.getEndpoints(), describe(details)).stream().map(URI::toString).toList();
    }

    private static String describe(EtcdConnectionDetails details) {
        return (details instanceof PropertiesEtcdConnectionDetails) ? EtcdEndpoints.PROPERTY
                : "EtcdConnectionDetails (" + details.getClass().getName() + ")";
    }

    private static void applyCredentials(ClientBuilder builder, @Nullable String username, @Nullable String password,
            String source) {
        boolean hasUser = StringUtils.hasLength(username);
        if (hasUser != StringUtils.hasLength(password)) {
            throw new IllegalStateException(source + " gives " + (hasUser ? "a user name but no password"
                    : "a password but no user name") + "; etcd authentication needs both");
        }
        if (hasUser) {
            builder.user(ByteSequence.from(username, StandardCharsets.UTF_8))
                .password(ByteSequence.from(password, StandardCharsets.UTF_8));
        }
    }

    private static @Nullable SslContext sslContext(boolean secure, @Nullable SslBundle bundle, String source) {
        if (!secure) {
            if (bundle != null) {
                throw new IllegalStateException(source + " gives an SSL bundle but http:// endpoints; "
                        + "use https:// endpoints to connect with TLS");
            }
            return null;
        }
        SslContextBuilder builder = GrpcSslContexts.forClient();
        if (bundle != null) {
            if (bundle.getStores() == null || bundle.getStores().getKeyStore() != null) {
                builder.keyManager(bundle.getManagers().getKeyManagerFactory());
            }
            builder.trustManager(bundle.getManagers().getTrustManagerFactory());
            SslOptions options = bundle.getOptions();
            if (options.getEnabledProtocols() != null) {
                builder.protocols(options.getEnabledProtocols());
            }
            if (options.getCiphers() != null) {
                builder.ciphers(Arrays.asList(options.getCiphers()));
            }
        }
        try {
            return builder.build();
        }
        catch (SSLException | RuntimeException ex) {
            throw new IllegalStateException("Could not set up TLS for " + source + ": " + ex.getMessage(), ex);
        }
    }
}
