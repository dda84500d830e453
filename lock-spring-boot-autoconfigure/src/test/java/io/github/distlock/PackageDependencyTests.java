package io.github.distlock;

import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import io.github.distlock.aop.LockMetrics;
import io.github.distlock.core.LockCore;
import io.github.distlock.etcd.EtcdLockRegistry;
import io.github.distlock.inmemory.InMemoryLockStore;
import io.github.distlock.jdbc.JdbcLockRegistry;
import io.github.distlock.redis.RedisLockRegistry;
import io.github.distlock.store.LockStore;
import io.github.distlock.zookeeper.ZookeeperLockRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What each package may not depend on, checked on the compiled classes, whose constant pools name
 * every type they use: the lock core, the store SPI and the API know no store client and no
 * framework (every store builds on them), and the aspect knows no metrics library (Micrometer is
 * optional, and its code lives in {@code io.github.distlock.metrics}). Within the library, the lock
 * engine is layered one way: the API uses none of the library's packages, the store SPI only the
 * API, the core the SPI and the API, and each store those three but no other store; and no two
 * packages use each other, however indirectly. The one exception is a name the contract fixes:
 * {@link InMemoryLockRegistry} is the core over the in-memory store, so it counts as a class of
 * {@code io.github.distlock.inmemory}, where it would live but for that name.
 */
class PackageDependencyTests {

    private static final String IN_MEMORY_REGISTRY = InMemoryLockRegistry.class.getSimpleName();

    private static final Pattern LIBRARY_PACKAGE = Pattern.compile("io/github/distlock/((?:[a-z][a-z0-9]*/)*)[A-Z]");

    static Stream<Arguments> layers() {
        Set<String> engine = Set.of("io.github.distlock", "io.github.distlock.store", "io.github.distlock.core");
        return Stream.of(Arguments.of(LockRegistry.class, Set.of("io.github.distlock")),
                Arguments.of(LockStore.class, Set.of("io.github.distlock", "io.github.distlock.store")),
                Arguments.of(LockCore.class, engine), Arguments.of(InMemoryLockStore.class, engine),
                Arguments.of(EtcdLockRegistry.class, engine), Arguments.of(RedisLockRegistry.class, engine),
                Arguments.of(JdbcLockRegistry.class, engine), Arguments.of(ZookeeperLockRegistry.class, engine));
    }

    @ParameterizedTest(name = "{0}''s package uses only {1}")
    @MethodSource("layers")
    void engineLayerUsesOnlyTheLayersBelow(Class<?> member, Set<String> allowed) throws IOException, URISyntaxException {
        List<Path> classFiles = new ArrayList<>(classesOf(member));
        classFiles.removeIf(PackageDependencyTests::isInMemoryRegistry);
        if (member == InMemoryLockStore.class) {
            classFiles.addAll(classesOf(InMemoryLockRegistry.class).stream().filter(PackageDependencyTests::isInMemoryRegistry).toList());
        }
        for (Path classFile : classFiles) {
            Set<String> used = new TreeSet<>(libraryPackagesUsedBy(classFile));
            used.remove(member.getPackageName());
            assertThat(used).as(classFile.getFileName() + " uses").isSubsetOf(allowed);
        }
    }

    @Test
    void noTwoPackagesUseEachOther() throws IOException, URISyntaxException {
        Path root = Path.of(LockRegistry.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        Map<String, Set<String>> uses = new TreeMap<>();
        try (Stream<Path> files = Files.walk(root.resolve("io/github/distlock"))) {
            for (Path classFile : files.filter((file) -> file.toString().endsWith(".class")).toList()) {
                String own = isInMemoryRegistry(classFile) ? InMemoryLockStore.class.getPackageName()
                        : root.relativize(classFile.getParent()).toString().replace('/', '.');
                uses.computeIfAbsent(own, (name) -> new TreeSet<>()).addAll(libraryPackagesUsedBy(classFile));
            }
        }
        uses.forEach((name, used) -> used.remove(name));
        assertThat(uses).containsKeys("io.github.distlock", "io.github.distlock.core", "io.github.distlock.etcd");
        for (String start : uses.keySet()) {
            assertThat(pathBackTo(start, uses)).as("a path of uses from %s back to itself", start).isEmpty();
        }
    }

    /** @return whether the class file is {@link InMemoryLockRegistry} or one of its nested classes */
    private static boolean isInMemoryRegistry(Path classFile) {
        String name = classFile.getFileName().toString();
        return classFile.getParent().endsWith("io/github/distlock")
                && (name.equals(IN_MEMORY_REGISTRY + ".class") || name.startsWith(IN_MEMORY_REGISTRY + "$"));
    }

    /** @return a path of uses that leads from {@code start} back to it, or an empty list if none does */
    private static List<String> pathBackTo(String start, Map<String, Set<String>> uses) {
        List<List<String>> paths = new ArrayList<>(List.of(List.of(start)));
        Set<String> seen = new HashSet<>();
        while (!paths.isEmpty()) {
            List<String> path = paths.remove(0);
            for (String next : uses.getOrDefault(path.get(path.size() - 1), Set.of())) {
                List<String> longer = new ArrayList<>(path);
                longer.add(next);
                if (next.equals(start)) {
                    return longer;
                }
                if (seen.add(next)) {
                    paths.add(longer);
                }
            }
        }
        return List.of();
    }

    /** @return the library's packages whose types a class file names in its constant pool */
    private static Set<String> libraryPackagesUsedBy(Path classFile) throws IOException {
        String constants = new String(Files.readAllBytes(classFile), StandardCharsets.ISO_8859_1);
        Set<String> packages = new HashSet<>();
        Matcher matcher = LIBRARY_PACKAGE.matcher(constants);
        while (matcher.find()) {
            String subpackage = matcher.group(1);
            packages.add(("io.github.distlock." + subpackage.replace('/', '.')).replaceAll("\\.$", ""));
        }
        return packages;
    }

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
