package io.github.distlock.autoconfigure.testcontainers;

import java.lang.reflect.Proxy;
import java.util.Map;

import org.testcontainers.containers.Container;

/**
 * A Testcontainers {@link Container} that exists only as the host and mapped ports it reports:
 * what connection details read from a started container. Every other method throws.
 */
public final class StubContainer {

    private StubContainer() {
    }

    /**
     * A container on {@code host} whose container ports map to the given host ports.
     * @param host the host the container is reached on
     * @param mappedPorts container port to host port
     * @return the stub
     */
    public static Container<?> of(String host, Map<Integer, Integer> mappedPorts) {
        return (Container<?>) Proxy.newProxyInstance(StubContainer.class.getClassLoader(),
                new Class<?>[] { Container.class }, (proxy, method, args) -> switch (method.getName()) {
                    case "getHost" -> host;
                    case "getMappedPort" -> {
                        Integer port = mappedPorts.get((Integer) args[0]);
                        if (port == null) {
                            throw new IllegalArgumentException("Requested port (" + args[0] + ") is not mapped");
                        }
                        yield port;
                    }
                    case "toString" -> "StubContainer[" + host + " " + mappedPorts + "]";
                    case "hashCode" -> System.identityHashCode(proxy);
                    case "equals" -> proxy == args[0];
                    default -> throw new UnsupportedOperationException(method.getName());
                });
    }
}
