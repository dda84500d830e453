package org.springframework.boot.docker.compose.service.connection;

import org.springframework.boot.docker.compose.core.RunningService;
import org.springframework.mock.env.MockEnvironment;

/**
 * Builds the {@link DockerComposeConnectionSource} that Spring Boot makes for a running Docker
 * Compose service, whose constructor is package-private, so that connection details factories
 * can be tested without Docker.
 */
public final class TestDockerComposeConnectionSources {

    private TestDockerComposeConnectionSources() {
    }

    /**
     * A source for {@code service}.
     * @param service the running service
     * @return the source
     */
    public static DockerComposeConnectionSource of(RunningService service) {
        return new DockerComposeConnectionSource(service, new MockEnvironment());
    }
}
