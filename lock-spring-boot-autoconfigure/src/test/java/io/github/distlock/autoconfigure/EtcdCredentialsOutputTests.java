package io.github.distlock.autoconfigure;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;

/**
 * Credentials written into an etcd endpoint URL fail start-up without reaching the output: what
 * Spring Boot prints when an application fails, failure analysis included, not only the exception.
 */
@ExtendWith(OutputCaptureExtension.class)
class EtcdCredentialsOutputTests {

    @Test
    void credentialsInAnEndpointNeverReachTheStartUpReport(CapturedOutput output) {
        SpringApplication application = new SpringApplication(App.class);
        application.setWebApplicationType(WebApplicationType.NONE);
        assertThatException().isThrownBy(() -> application
            .run("--distributed-lock.etcd.endpoints=http://root:hunter2@127.0.0.1:2379"));
        assertThat(output.getAll()).contains("'http://***@127.0.0.1:2379'")
            .contains("credentials do not belong in the URL")
            .doesNotContain("hunter2");
    }

    @ParameterizedTest
    @ValueSource(strings = { "hun/ter2", "hun?ter2", "hun#ter2", "hun@ter2" })
    void passwordsWithUrlDelimitersAreNotShownEither(String password, CapturedOutput output) {
        SpringApplication application = new SpringApplication(App.class);
        application.setWebApplicationType(WebApplicationType.NONE);
        assertThatException().isThrownBy(() -> application
            .run("--distributed-lock.etcd.endpoints=http://root:" + password + "@127.0.0.1:2379"));
        assertThat(output.getAll()).contains("'http://***@127.0.0.1:2379'").doesNotContain("ter2");
    }

    @Test
    void aMalformedEndpointWithCredentialsIsNotShownEither(CapturedOutput output) {
        SpringApplication application = new SpringApplication(App.class);
        application.setWebApplicationType(WebApplicationType.NONE);
        assertThatException().isThrownBy(() -> application
            .run("--distributed-lock.etcd.endpoints=http://root:hunter2@etcd host:2379"));
        assertThat(output.getAll()).contains("distributed-lock.etcd.endpoints contains 'http://***@etcd host:2379'")
            .doesNotContain("hunter2");
    }

    @Configuration(proxyBeanMethods = false)
    @ImportAutoConfiguration(DistributedLockAutoConfiguration.class)
    static class App {
    }
}
