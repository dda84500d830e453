package io.github.distlock.aop;

import java.io.StringWriter;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;

import io.github.distlock.annotation.DistributedLock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.core.annotation.MergedAnnotation;
import org.springframework.mock.env.MockEnvironment;
import org.springframework.util.ReflectionUtils;
import org.springframework.util.StringUtils;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * Checking at start-up that every variable a key expression references exists for its method, so
 * that a typo or missing parameter names fail start-up instead of turning every call's key into
 * the same {@code "...null"} string.
 */
class LockKeyVariablesTests {

    private final LockOperationSource source = new LockOperationSource(new MockEnvironment(), Duration.ofSeconds(1));

    private final LockKeyResolver keys = new LockKeyResolver(null);

    @Test
    void rejectsAParameterNameThatDoesNotExist() {
        String method = Typo.class.getName() + ".ship(String)";
        assertThatIllegalStateException().isThrownBy(() -> this.source.hasOperations(Typo.class))
            .withMessage("Invalid @DistributedLock on " + method + ": key ''order:' + #orderID' references #orderID, "
                    + "but " + method + " has no parameter of that name (its parameters are: orderId)");
    }

    @Test
    void rejectsAParameterNameOnAMethodWithoutParameters() {
        assertThatIllegalStateException().isThrownBy(() -> this.source.hasOperations(NoParameters.class))
            .withMessageContaining("references #id, but " + NoParameters.class.getName()
                    + ".run() has no parameter of that name (it has no parameters)");
    }

    @Test
    void checksVariablesInsideNestedExpressions() {
        assertThatIllegalStateException().isThrownBy(() -> this.source.hasOperations(NestedTypo.class))
            .withMessageContaining("references #tenantID, but");
    }

    @Test
    void rejectsPositionsOutOfRange() {
        assertThatIllegalStateException().isThrownBy(() -> this.source.hasOperations(PositionOutOfRange.class))
            .withMessageContaining(PositionOutOfRange.class.getName() + ".run(String, int)")
            .withMessageContaining("references #p2, but")
            .withMessageContaining("has 2 parameters (#p0 to #p1, or #a0 to #a1)");
        assertThatIllegalStateException().isThrownBy(() -> this.source.hasOperations(PositionWithoutParameters.class))
            .withMessageContaining("references #a0, but")
            .withMessageContaining("has no parameters");
    }

    @Test
    void rejectsUnknownRootProperties() {
        assertThatIllegalStateException().isThrownBy(() -> this.source.hasOperations(RootTypo.class))
            .withMessageContaining(RootTypo.class.getName() + ".run()")
            .withMessageContaining("references #root.methodname, but #root has only args, method, methodName, "
                    + "target and targetClass");
        assertThatIllegalStateException().isThrownBy(() -> this.source.hasOperations(RootMethodTypo.class))
            .withMessageContaining("references #root.getArguments(), but #root has only");
    }

    @Test
    void rejectsAParameterWrittenWithoutItsHash() {
        String method = MissingHash.class.getName() + ".ship(String)";
        assertThatIllegalStateException().isThrownBy(() -> this.source.hasOperations(MissingHash.class))
            .withMessage("Invalid @DistributedLock on " + method + ": key ''order:' + orderId' references orderId "
                    + "without '#', which SpEL reads from #root, and #root has only args, method, methodName, target "
                    + "and targetClass: write the parameter as #orderId");
    }

    @Test
    void rejectsConstantTextWithoutQuotes() {
        assertThatIllegalStateException().isThrownBy(() -> this.source.hasOperations(UnquotedConstant.class))
            .withMessageContaining("key 'nightly-report' references nightly without '#'")
            .withMessageContaining("constant text in quotes ('nightly-report')");
        assertThatIllegalStateException().isThrownBy(() -> this.source.hasOperations(BareMethodCall.class))
            .withMessageContaining("key '#id + describe()' references describe() without '#'");
    }

    @Test
    void acceptsBareRootPropertiesElementNamesAndMapIndexes() {
        assertThat(this.source.hasOperations(BareNamesThatAreFine.class)).isTrue();
        Method method = ReflectionUtils.findMethod(BareNamesThatAreFine.class, "run", List.class, Map.class);
        LockOperation operation = this.source.getOperation(method, BareNamesThatAreFine.class);
        assertThat(this.keys.resolve(operation, new BareNamesThatAreFine(), BareNamesThatAreFine.class,
                new Object[] { List.of("a", "", "b"), Map.of("tenant", "t-1") }))
            .isEqualTo("run:2:t-1:v");
    }

    @Test
    void acceptsEveryPropertyOfTheRoot() {
        List<String> getters = Arrays.stream(LockExpressionRoot.class.getDeclaredMethods())
            .filter((method) -> Modifier.isPublic(method.getModifiers()) && method.getName().startsWith("get"))
            .map((method) -> StringUtils.uncapitalize(method.getName().substring(3)))
            .toList();
        assertThat(getters).contains("method", "methodName", "target", "targetClass", "args");
        Method method = ReflectionUtils.findMethod(Valid.class, "everything", String.class, List.class);
        for (String property : getters) {
            DistributedLock annotation = MergedAnnotation
                .of(DistributedLock.class, Map.of("key", "#root." + property + ".toString()"))
                .synthesize();
            assertThat(new LockOperationParser(new MockEnvironment(), Duration.ZERO).parse(method, annotation)
                .keyExpression()).as(property).isNotNull();
        }
    }

    @Test
    void rejectsFunctionCalls() {
        assertThatIllegalStateException().isThrownBy(() -> this.source.hasOperations(FunctionCall.class))
            .withMessageContaining("key '#hash(#id)' calls #hash(), but no functions are registered");
    }

    @Test
    void rejectsAssignments() {
        assertThatIllegalStateException().isThrownBy(() -> this.source.hasOperations(Assignment.class))
            .withMessageContaining("key '#seen = #id' assigns to #seen")
            .withMessageContaining("a lock key must not set variables");
    }

    @Test
    void acceptsParametersPositionsRootAndThis() {
        assertThat(this.source.hasOperations(Valid.class)).isTrue();
        Method method = ReflectionUtils.findMethod(Valid.class, "everything", String.class, List.class);
        LockOperation operation = this.source.getOperation(method, Valid.class);
        Valid target = new Valid();
        assertThat(this.keys.resolve(operation, target, Valid.class, new Object[] { "o-1", List.of("x", "") }))
            .isEqualTo("o-1/o-1/o-1/everything/everything/Valid/2/1/true");
    }

    @Test
    void rejectsNamedParametersWhenNamesAreNotCompiledIn(@TempDir Path classes) throws Exception {
        try (URLClassLoader loader = compileWithoutParameterNames(classes)) {
            Class<?> named = loader.loadClass("generated.NamedKey");
            Method ship = named.getMethod("ship", String.class);
            assertThat(ship.getParameters()[0].isNamePresent()).as("compiled without -parameters").isFalse();
            assertThatIllegalStateException().isThrownBy(() -> this.source.hasOperations(named))
                .withMessage("Invalid @DistributedLock on generated.NamedKey.ship(String): key ''order:' + #orderId' "
                        + "references #orderId, but the parameter names of generated.NamedKey.ship(String) are not "
                        + "available: compile with -parameters (the Spring Boot parent does), or use #p0/#a0");
        }
    }

    @Test
    void acceptsPositionsWhenNamesAreNotCompiledIn(@TempDir Path classes) throws Exception {
        try (URLClassLoader loader = compileWithoutParameterNames(classes)) {
            Class<?> positional = loader.loadClass("generated.PositionalKey");
            assertThat(this.source.hasOperations(positional)).isTrue();
            Method ship = positional.getMethod("ship", String.class);
            LockOperation operation = this.source.getOperation(ship, positional);
            Object target = positional.getConstructor().newInstance();
            assertThat(this.keys.resolve(operation, target, positional, new Object[] { "o-2" }))
                .isEqualTo("order:o-2/o-2");
        }
    }

    /**
     * Compiles two annotated classes without {@code -parameters}, as a build that imports the
     * Spring Boot BOM without its parent does, since this module's own classes keep their names.
     */
    private static URLClassLoader compileWithoutParameterNames(Path classes) throws Exception {
        Path sources = Files.createDirectories(classes.resolve("src/generated"));
        Path named = Files.writeString(sources.resolve("NamedKey.java"), """
                package generated;

                import io.github.distlock.annotation.DistributedLock;

                public class NamedKey {

                    @DistributedLock(key = "'order:' + #orderId")
                    public void ship(String orderId) {
                    }
                }
                """);
        Path positional = Files.writeString(sources.resolve("PositionalKey.java"), """
                package generated;

                import io.github.distlock.annotation.DistributedLock;

                public class PositionalKey {

                    @DistributedLock(key = "'order:' + #p0 + '/' + #a0")
                    public void ship(String orderId) {
                    }
                }
                """);
        JavaCompiler compiler = ToolProvider.getSystemJavaCompiler();
        assertThat(compiler).as("a JDK compiler").isNotNull();
        String annotations = Path.of(DistributedLock.class.getProtectionDomain().getCodeSource().getLocation().toURI())
            .toString();
        StringWriter diagnostics = new StringWriter();
        Boolean compiled = compiler
            .getTask(diagnostics, null, null,
                    List.of("--release", "17", "-proc:none", "-classpath", annotations, "-d", classes.toString()), null,
                    compiler.getStandardFileManager(null, null, null)
                        .getJavaFileObjects(named.toFile(), positional.toFile()))
            .call();
        assertThat(compiled).as(diagnostics.toString()).isTrue();
        return new URLClassLoader(new URL[] { classes.toUri().toURL() }, LockKeyVariablesTests.class.getClassLoader());
    }

    static class Typo {

        @DistributedLock(key = "'order:' + #orderID")
        public void ship(String orderId) {
        }
    }

    static class NoParameters {

        @DistributedLock(key = "#id")
        public void run() {
        }
    }

    static class NestedTypo {

        @DistributedLock(key = "#id != null ? T(java.lang.String).valueOf(#tenantID) + ':' + #id : 'none'")
        public void run(String id, String tenantId) {
        }
    }

    static class PositionOutOfRange {

        @DistributedLock(key = "#p0 + #p2")
        public void run(String first, int second) {
        }
    }

    static class PositionWithoutParameters {

        @DistributedLock(key = "#a0")
        public void run() {
        }
    }

    static class RootTypo {

        @DistributedLock(key = "#root.methodname")
        public void run() {
        }
    }

    static class RootMethodTypo {

        @DistributedLock(key = "#root.getArguments()[0]")
        public void run(String id) {
        }
    }

    static class FunctionCall {

        @DistributedLock(key = "#hash(#id)")
        public void run(String id) {
        }
    }

    static class Assignment {

        @DistributedLock(key = "#seen = #id")
        public void run(String id) {
        }
    }

    static class MissingHash {

        @DistributedLock(key = "'order:' + orderId")
        public void ship(String orderId) {
        }
    }

    static class UnquotedConstant {

        @DistributedLock(key = "nightly-report")
        public void run() {
        }
    }

    static class BareMethodCall {

        @DistributedLock(key = "#id + describe()")
        public void run(String id) {
        }
    }

    static class BareNamesThatAreFine {

        @DistributedLock(key = "methodName + ':' + #tags.?[length() > 0].size() + ':' + #labels[tenant] + ':' "
                + "+ {k: 'v'}[k]")
        public void run(List<String> tags, Map<String, String> labels) {
        }
    }

    static class Valid {

        @DistributedLock(key = "#id + '/' + #p0 + '/' + #a0 + '/' + #root.methodName + '/' + #root.method.name + '/'"
                + " + #root.targetClass.simpleName + '/' + #root.args.length + '/' + #tags.?[#this.isEmpty()].size()"
                + " + '/' + (#this == #root)")
        public void everything(String id, List<String> tags) {
        }
    }
}
