package io.github.distlock.sample;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * One sample instance on a random port, against a real etcd that each test class starts for
 * itself ({@link SampleEtcd}). The scheduled report is off, so that it does not interfere.
 */
@ExtendWith(SampleEtcd.class)
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = { "sample.report.enabled=false", "sample.instance-name=test-instance",
                "server.tomcat.basedir=target/tomcat" })
@DirtiesContext
public abstract class AbstractSampleIntegrationTests {

    @LocalServerPort
    protected int port;

    protected SampleHttp http;

    @DynamicPropertySource
    static void etcdEndpoints(DynamicPropertyRegistry registry) {
        registry.add("distributed-lock.etcd.endpoints", SampleEtcd::endpoints);
    }

    @BeforeEach
    void client() {
        this.http = new SampleHttp(this.port);
    }
}
