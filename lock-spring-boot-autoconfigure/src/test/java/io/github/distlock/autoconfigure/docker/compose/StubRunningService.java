package io.github.distlock.autoconfigure.docker.compose;

import java.util.List;
import java.util.Map;

import org.springframework.boot.docker.compose.core.ConnectionPorts;
import org.springframework.boot.docker.compose.core.ImageReference;
import org.springframework.boot.docker.compose.core.RunningService;

/**
 * A running Docker Compose service as {@code docker compose ps} and {@code inspect} would describe
 * it: reached on {@code host}, with container ports published as {@code publishedPorts}.
 */
public record StubRunningService(String host, String imageName, Map<String, String> labels, Map<String, String> env,
        Map<Integer, Integer> publishedPorts) implements RunningService {

    @Override
    public String name() {
        return "etcd-1";
    }

    @Override
    public ImageReference image() {
        return ImageReference.of(this.imageName);
    }

    @Override
    public ConnectionPorts ports() {
        return new ConnectionPorts() {

            @Override
            public int get(int containerPort) {
                Integer port = StubRunningService.this.publishedPorts.get(containerPort);
                if (port == null) {
                    throw new IllegalStateException("No host port mapping found for container port " + containerPort);
                }
                return port;
            }

            @Override
            public List<Integer> getAll() {
                return List.copyOf(StubRunningService.this.publishedPorts.values());
            }

            @Override
            public List<Integer> getAll(String protocol) {
                return "tcp".equals(protocol) ? getAll() : List.of();
            }
        };
    }
}
