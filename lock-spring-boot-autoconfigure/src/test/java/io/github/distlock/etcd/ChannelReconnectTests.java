package io.github.distlock.etcd;

import java.lang.reflect.Proxy;

import io.etcd.jetcd.Client;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatNoException;

/**
 * {@link ChannelReconnect} reads jetcd internals: this fails first if a jetcd upgrade moves them,
 * before the outage test in the fault suite shows the slow reconnect it would bring back.
 */
class ChannelReconnectTests {

    @Test
    void reachesTheChannelOfJetcdsClient() {
        try (Client client = Client.builder().endpoints("http://127.0.0.1:9").build()) {
            ChannelReconnect reconnect = ChannelReconnect.of(client);
            assertThat(reconnect.isEffective()).isTrue();
            // Before the first call jetcd has not built its channel yet; after one, it has.
            assertThatNoException().isThrownBy(reconnect::now);
            client.getKVClient();
            assertThatNoException().isThrownBy(reconnect::now);
        }
    }

    @Test
    void otherClientImplementationsGetTheChannelsOwnBackoff() {
        Client other = (Client) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] { Client.class },
                (proxy, method, args) -> {
                    throw new UnsupportedOperationException(method.getName());
                });
        ChannelReconnect reconnect = ChannelReconnect.of(other);
        assertThat(reconnect.isEffective()).isFalse();
        assertThatNoException().isThrownBy(reconnect::now);
    }
}
