package io.github.distlock.aop;

import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The aspect depends on no metrics library: Micrometer is optional, and its code lives in
 * {@code io.github.distlock.metrics}. Checked on the compiled classes, whose constant pools name
 * every type they use.
 */
class AopPackageDependencyTests {

    @Test
    void noClassOfTheAopPackageReferencesMicrometer() throws IOException, URISyntaxException {
        List<Path> classes = classesOf(LockMetrics.class);
        assertThat(classes).isNotEmpty();
        for (Path classFile : classes) {
            String constants = new String(Files.readAllBytes(classFile), StandardCharsets.ISO_8859_1);
            assertThat(constants).as(classFile.getFileName().toString()).doesNotContain("io/micrometer/");
        }
    }

    /** The class files of the package of {@code type}, nested classes included. */
    private static List<Path> classesOf(Class<?> type) throws IOException, URISyntaxException {
        Path root = Path.of(type.getProtectionDomain().getCodeSource().getLocation().toURI());
        assertThat(root).as("main classes are a directory, as in a Maven build").isDirectory();
        Path packageDirectory = root.resolve(type.getPackageName().replace('.', '/'));
        try (Stream<Path> files = Files.list(packageDirectory)) {
            return files.filter((file) -> file.toString().endsWith(".class")).sorted().toList();
        }
    }
}
