package io.github.distlock.autoconfigure;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import io.github.distlock.aop.DistributedLockAdvisor;
import org.junit.jupiter.api.Test;
import org.springframework.boot.json.JsonParserFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The configuration metadata that {@code spring-boot-configuration-processor} generates from
 * {@link DistributedLockProperties}: every property is described, and the contract properties
 * carry their documented defaults.
 */
class DistributedLockPropertiesMetadataTests {

    @Test
    void everyPropertyIsDescribed() throws IOException {
        Map<String, Map<String, Object>> properties = properties();
        assertThat(properties.keySet()).contains("distributed-lock.enabled", "distributed-lock.store",
                "distributed-lock.wait-timeout", "distributed-lock.aspect-order", "distributed-lock.owner-identity",
                "distributed-lock.etcd.endpoints", "distributed-lock.etcd.namespace", "distributed-lock.etcd.lease-ttl",
                "distributed-lock.etcd.connect-timeout", "distributed-lock.etcd.request-timeout",
                "distributed-lock.etcd.keep-alive-time", "distributed-lock.etcd.keep-alive-timeout",
                "distributed-lock.etcd.username", "distributed-lock.etcd.password",
                "distributed-lock.etcd.tls.ca-file", "distributed-lock.etcd.tls.cert-file",
                "distributed-lock.etcd.tls.key-file", "distributed-lock.etcd.tls.key-password",
                "distributed-lock.redis.namespace", "distributed-lock.redis.lease-ttl",
                "distributed-lock.redis.request-timeout");
        properties.forEach((name, property) -> assertThat((String) property.get("description")).as(name)
            .isNotBlank()
            .doesNotStartWith("The ")
            .doesNotStartWith("A ")
            .endsWith("."));
    }

    @Test
    void contractPropertiesHaveTheirDefaults() throws IOException {
        Map<String, Map<String, Object>> properties = properties();
        assertThat(defaultOf(properties, "distributed-lock.enabled")).isEqualTo("true");
        assertThat(defaultOf(properties, "distributed-lock.store")).isEqualTo("etcd");
        assertThat(defaultOf(properties, "distributed-lock.wait-timeout")).isEqualTo("30s");
        assertThat(defaultOf(properties, "distributed-lock.etcd.endpoints")).isEqualTo("[http://127.0.0.1:2379]");
        assertThat(defaultOf(properties, "distributed-lock.etcd.namespace")).isEqualTo("/distributed-lock/");
        assertThat(defaultOf(properties, "distributed-lock.etcd.lease-ttl")).isEqualTo("10s");
        assertThat(defaultOf(properties, "distributed-lock.etcd.connect-timeout")).isEqualTo("5s");
        assertThat(defaultOf(properties, "distributed-lock.etcd.request-timeout")).isEqualTo("5s");
        assertThat(defaultOf(properties, "distributed-lock.etcd.keep-alive-time")).isEqualTo("5s");
        assertThat(defaultOf(properties, "distributed-lock.etcd.keep-alive-timeout")).isEqualTo("3s");
        assertThat(defaultOf(properties, "distributed-lock.redis.namespace")).isEqualTo("distributed-lock:");
        assertThat(defaultOf(properties, "distributed-lock.redis.lease-ttl")).isEqualTo("10s");
        assertThat(defaultOf(properties, "distributed-lock.redis.request-timeout")).isEqualTo("5s");
        assertThat(defaultOf(properties, "distributed-lock.aspect-order"))
            .isEqualTo(Integer.toString(DistributedLockAdvisor.DEFAULT_ORDER));
    }

    /** The default as text: the basic JSON parser keeps numbers and booleans as strings. */
    private static String defaultOf(Map<String, Map<String, Object>> properties, String name) {
        assertThat(properties).containsKey(name);
        return String.valueOf(properties.get(name).get("defaultValue"));
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Map<String, Object>> properties() throws IOException {
        try (InputStream input = DistributedLockPropertiesMetadataTests.class
            .getResourceAsStream("/META-INF/spring-configuration-metadata.json")) {
            assertThat(input).as("generated configuration metadata").isNotNull();
            // Without line breaks and indentation, which the basic parser would keep around list elements.
            String json = new String(input.readAllBytes(), StandardCharsets.UTF_8).replaceAll("\\R\\s*", "");
            Map<String, Object> metadata = JsonParserFactory.getJsonParser().parseMap(json);
            return ((List<Map<String, Object>>) metadata.get("properties")).stream()
                .filter((property) -> ((String) property.get("name")).startsWith("distributed-lock."))
                .collect(Collectors.toMap((property) -> (String) property.get("name"), (property) -> property));
        }
    }
}
