package io.github.distlock;

import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

import io.github.distlock.aop.LockMetrics;
import io.github.distlock.core.LockCore;
import io.github.distlock.store.LockStore;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What each package may not depend on, checked on the compiled classes, whose constant pools name
 * every type they use: the lock core, the store SPI and the API know no store client and no
 * framework (every store builds on them), and the aspect knows no metrics library (Micrometer is
 * optional, and its code lives in {@code io.github.distlock.metrics}).
 */
class PackageDependencyTests {

    static Stream<Arguments> rules() {
        List<String> storeClientsAndFrameworks = List.of("io/etcd/", "io/grpc/", "io/micrometer/", "org/springframework/");
        return Stream.of(Arguments.of(LockCore.class, storeClientsAndFrameworks),
                Arguments.of(LockStore.class, storeClientsAndFrameworks),
                Arguments.of(LockRegistry.class, storeClientsAndFrameworks),
                Arguments.of(LockMetrics.class, List.of("io/micrometer/")));
    }

    @ParameterizedTest(name = "{0}''s package uses none of {1}")
    @MethodSource("rules")
    void packageUsesNoneOf(Class<?> member, List<String> forbidden) throws IOException, URISyntaxException {
        List<Path> classes = classesOf(member);
        assertThat(classes).isNotEmpty();
        for (Path classFile : classes) {
            String constants = new String(Files.readAllBytes(classFile), StandardCharsets.ISO_8859_1);
            for (String prefix : forbidden) {
                assertThat(constants).as(classFile.getFileName() + " uses " + prefix).doesNotContain(prefix);
            }
        }
    }

    /** The class files of the package of {@code type}, nested classes included, not its subpackages. */
    private static List<Path> classesOf(Class<?> type) throws IOException, URISyntaxException {
        Path root = Path.of(type.getProtectionDomain().getCodeSource().getLocation().toURI());
        assertThat(root).as("main classes are a directory, as in a Maven build").isDirectory();
        Path packageDirectory = root.resolve(type.getPackageName().replace('.', '/'));
        try (Stream<Path> files = Files.list(packageDirectory)) {
            return files.filter((file) -> file.toString().endsWith(".class")).sorted().toList();
        }
    }
}
