package io.github.distlock.autoconfigure;

import java.io.IOException;
import java.io.InputStream;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

import io.github.distlock.autoconfigure.UnknownPropertyCheck.UnknownProperty;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.mock.env.MockEnvironment;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

/**
 * A misspelled {@code distributed-lock.*} property is reported at start-up with the property it
 * was probably meant to be, and nothing that binds is.
 */
@ExtendWith(OutputCaptureExtension.class)
class UnknownPropertyCheckTests {

    @Test
    void theKnownPropertiesAreExactlyThoseOfTheConfigurationMetadata() throws IOException {
        Set<String> documented;
        try (InputStream metadata = getClass().getResourceAsStream("/META-INF/spring-configuration-metadata.json")) {
            assertThat(metadata).as("the generated configuration metadata").isNotNull();
            JsonNode root = JsonMapper.builder().build().readTree(metadata);
            documented = root.get("properties").valueStream().map((property) -> property.get("name").asString())
                .filter((name) -> name.startsWith("distributed-lock."))
                .collect(Collectors.toSet());
        }
        assertThat(documented).hasSizeGreaterThan(30);
        assertThat(UnknownPropertyCheck.knownProperties().stream().map(ConfigurationPropertyName::toString))
            .containsExactlyInAnyOrderElementsOf(documented);
    }

    @Test
    void everyFormThatBindsIsKnown() {
        MockEnvironment environment = new MockEnvironment().withProperty("distributed-lock.store", "redis")
            .withProperty("distributed-lock.etcd.leaseTtl", "5s")
            .withProperty("distributed-lock.etcd.lease_ttl", "5s")
            .withProperty("distributed-lock.etcd.endpoints[0]", "http://a:2379")
            .withProperty("distributed-lock.etcd.endpoints.1", "http://b:2379")
            .withProperty("distributed-lock.etcd.tls.ca-file", "/etc/ca.pem")
            .withProperty("distributed-lock.local-handoff.window", "10ms")
            // An empty YAML section ("etcd:" with everything under it commented out) sets the group to "".
            .withProperty("distributed-lock.etcd", "")
            .withProperty("spring.data.redis.host", "localhost");
        assertThat(UnknownPropertyCheck.find(environment)).isEmpty();
    }

    @Test
    void misspelledPropertiesAreFoundWithTheClosestKnownOne() {
        MockEnvironment environment = new MockEnvironment().withProperty("distributed-lock.stor", "redis")
            .withProperty("distributed-lock.etcd.lease-tll", "5s")
            .withProperty("distributed-lock.redis.endpoints[0]", "redis://a");
        List<UnknownProperty> unknown = UnknownPropertyCheck.find(environment);
        assertThat(unknown).extracting(UnknownProperty::name, UnknownProperty::closest)
            .containsExactly(tuple("distributed-lock.etcd.lease-tll", "distributed-lock.etcd.lease-ttl"),
                    tuple("distributed-lock.redis.endpoints[0]", "distributed-lock.etcd.endpoints"),
                    tuple("distributed-lock.stor", "distributed-lock.store"));
    }

    @Test
    void startUpWarnsOncePerUnknownPropertyNamingWhereItWasSet(CapturedOutput output) {
        new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(DistributedLockAutoConfiguration.class))
            .withPropertyValues("distributed-lock.stor=redis", "distributed-lock.etcd.lease-ttl=20s")
            .run((context) -> {
                assertThat(context).hasNotFailed();
                List<String> warnings = output.getAll().lines().filter((line) -> line.contains("Unknown property")).toList();
                assertThat(warnings).as("warnings about unknown properties").hasSize(1);
                assertThat(warnings.get(0)).contains("WARN")
                    .contains("Unknown property 'distributed-lock.stor' (")
                    .endsWith(": distlock ignores it; the closest known property is 'distributed-lock.store'");
            });
    }
}
