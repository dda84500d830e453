package org.springframework.boot.testcontainers.service.connection;

import java.lang.reflect.Field;

import org.springframework.core.annotation.MergedAnnotation;
import org.springframework.core.annotation.MergedAnnotations;
import org.testcontainers.containers.Container;

/**
 * Builds the {@link ContainerConnectionSource} that Spring Boot makes for a
 * {@code @ServiceConnection} field, whose constructor is package-private, so that connection
 * details factories can be tested without Docker.
 */
public final class TestContainerConnectionSources {

    private TestContainerConnectionSources() {
    }

    /**
     * A source as for {@code field}: its {@code @ServiceConnection} (name and type) and SSL
     * annotations ({@code @PemKeyStore}, {@code @PemTrustStore}, ...) apply.
     * @param field a field annotated with {@code @ServiceConnection}
     * @param containerType the declared container type, such as {@code GenericContainer.class}
     * @param imageName the container's image name, from which the connection name is deduced
     * @param container the container the details read host and ports from
     * @return the source
     */
    @SuppressWarnings("unchecked")
    public static <C extends Container<?>> ContainerConnectionSource<C> of(Field field, Class<?> containerType,
            String imageName, C container) {
        MergedAnnotations annotations = MergedAnnotations.from(field);
        MergedAnnotation<ServiceConnection> serviceConnection = annotations.get(ServiceConnection.class);
        if (!serviceConnection.isPresent()) {
            throw new IllegalArgumentException(field + " is not annotated with @ServiceConnection");
        }
        return new ContainerConnectionSource<>("test", new FieldOrigin(field), (Class<C>) containerType, imageName,
                serviceConnection, () -> container, SslBundleSource.get(annotations), annotations);
    }
}
