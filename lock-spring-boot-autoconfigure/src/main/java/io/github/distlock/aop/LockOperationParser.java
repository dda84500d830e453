package io.github.distlock.aop;

import java.beans.PropertyDescriptor;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Flow;
import java.util.concurrent.Future;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import io.github.distlock.annotation.DistributedLock;
import io.github.distlock.annotation.OnTimeout;
import io.github.distlock.aop.LockOperation.KeyPart;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.BeanUtils;
import org.springframework.boot.convert.DurationStyle;
import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.core.ReactiveAdapterRegistry;
import org.springframework.core.env.PropertyResolver;
import org.springframework.expression.Expression;
import org.springframework.expression.ParseException;
import org.springframework.expression.spel.SpelNode;
import org.springframework.expression.spel.ast.Assign;
import org.springframework.expression.spel.ast.CompoundExpression;
import org.springframework.expression.spel.ast.FunctionReference;
import org.springframework.expression.spel.ast.Indexer;
import org.springframework.expression.spel.ast.InlineMap;
import org.springframework.expression.spel.ast.Literal;
import org.springframework.expression.spel.ast.MethodReference;
import org.springframework.expression.spel.ast.OpDec;
import org.springframework.expression.spel.ast.OpInc;
import org.springframework.expression.spel.ast.OpPlus;
import org.springframework.expression.spel.ast.Projection;
import org.springframework.expression.spel.ast.PropertyOrFieldReference;
import org.springframework.expression.spel.ast.Selection;
import org.springframework.expression.spel.ast.VariableReference;
import org.springframework.expression.spel.standard.SpelExpression;
import org.springframework.expression.spel.standard.SpelExpressionParser;
import org.springframework.util.StringUtils;

/**
 * Turns a {@link DistributedLock} on a method into a {@link LockOperation}, rejecting everything
 * that could only fail later: unparsable keys, keys referencing variables the method does not
 * have, malformed or negative wait timeouts, unresolvable placeholders, methods a proxy cannot
 * intercept, asynchronous return types, and {@link OnTimeout#SKIP} on methods whose callers
 * expect a value.
 */
final class LockOperationParser {

    /** Names that MethodBasedEvaluationContext gives arguments by position, besides their own. */
    private static final Pattern POSITION = Pattern.compile("[pa](0|[1-9][0-9]{0,8})");

    /**
     * The properties of {@code #root}, read from {@link LockExpressionRoot}'s getters as SpEL
     * reads them, so that a new one needs no change here. Sorted, for messages.
     */
    private static final Set<String> ROOT_PROPERTIES = Arrays
        .stream(BeanUtils.getPropertyDescriptors(LockExpressionRoot.class))
        .filter((property) -> property.getReadMethod() != null
                && property.getReadMethod().getDeclaringClass() == LockExpressionRoot.class)
        .map(PropertyDescriptor::getName)
        .collect(Collectors.toCollection(TreeSet::new));

    /** {@link #ROOT_PROPERTIES} as a message lists them: "a, b and c". */
    private static final String ROOT_PROPERTY_LIST = listed(List.copyOf(ROOT_PROPERTIES));

    private static final Set<String> ROOT_METHODS = Arrays.stream(LockExpressionRoot.class.getMethods())
        .map(Method::getName)
        .collect(Collectors.toUnmodifiableSet());

    private final SpelExpressionParser expressionParser = new SpelExpressionParser();

    /** The discoverer {@link LockKeyResolver} evaluates keys with, so both see the same names. */
    private final ParameterNameDiscoverer parameterNames = new DefaultParameterNameDiscoverer();

    private final PropertyResolver placeholders;

    private final Duration defaultWaitTimeout;

    LockOperationParser(PropertyResolver placeholders, Duration defaultWaitTimeout) {
        this.placeholders = placeholders;
        this.defaultWaitTimeout = defaultWaitTimeout;
    }

    LockOperation parse(Method method, DistributedLock annotation) {
        String description = describe(method);
        checkInterceptable(method, description);
        checkReturnType(method, annotation, description);
        Expression keyExpression = parseKey(annotation.key(), description);
        List<KeyPart> keyParts = new ArrayList<>();
        if (keyExpression instanceof SpelExpression spel) {
            checkKeyVariables(method, spel.getAST(), true, false, annotation.key(), description);
            collectConcatenatedReads(spel.getAST(), keyParts);
        }
        Duration waitTimeout = parseWaitTimeout(annotation.waitTimeout(), description);
        String methodKey = method.getDeclaringClass().getName() + "." + method.getName();
        return new LockOperation(method, description, keyExpression, List.copyOf(keyParts), methodKey, annotation.fair(),
                waitTimeout, annotation.onTimeout(), annotation.onLockLost());
    }

    private void checkInterceptable(Method method, String description) {
        int modifiers = method.getModifiers();
        if (Modifier.isStatic(modifiers) || Modifier.isPrivate(modifiers)) {
            throw invalid(description, "the method is " + (Modifier.isStatic(modifiers) ? "static" : "private")
                    + ", so no proxy can intercept it and it would run without the lock");
        }
    }

    private void checkReturnType(Method method, DistributedLock annotation, String description) {
        Class<?> returnType = method.getReturnType();
        if (CompletionStage.class.isAssignableFrom(returnType) || Future.class.isAssignableFrom(returnType)
                || Flow.Publisher.class.isAssignableFrom(returnType)
                || ReactiveAdapterRegistry.getSharedInstance().getAdapter(returnType) != null) {
            throw invalid(description, "it returns " + returnType.getName()
                    + ", and asynchronous or reactive methods are not supported yet: the lock would be released "
                    + "before the work completes. Lock inside the asynchronous work instead");
        }
        if (annotation.onTimeout() == OnTimeout.SKIP && !LockOperation.canSkip(returnType)) {
            throw invalid(description, "onTimeout = SKIP needs a method returning void, Void or Optional, but it returns "
                    + returnType.getName() + ", and callers would receive null");
        }
    }

    private @Nullable Expression parseKey(String key, String description) {
        if (key.isEmpty()) {
            return null;
        }
        if (!StringUtils.hasText(key)) {
            throw invalid(description, "key '" + key + "' is blank: leave it empty for one lock per method, or give "
                    + "an expression");
        }
        try {
            return this.expressionParser.parseExpression(key);
        }
        catch (ParseException ex) {
            throw invalid(description, "key '" + key + "' is not a valid SpEL expression: " + ex.getMessage()
                    + " (a constant key is a string literal, for example \"'nightly-report'\")", ex);
        }
    }

    /**
     * SpEL concatenates {@code null} as the text {@code null} (and an empty string as nothing), so
     * {@code 'job:' + #jobId} gives every call without a job id the key {@code job:null}: one lock
     * for all of them, silently. The reads such a key concatenates at its top level are kept to be
     * checked on each call. Only plain reads (variables, their properties and indexes): evaluating
     * them again has no effect, and a part that is not one (a method call, {@code #jobId ?: 'none'},
     * a ternary) decides itself what a missing value becomes. Operands of a nested operator other
     * than {@code +} are not taken either, since that operator may not evaluate them.
     * @param node the key's root, or a concatenation in it
     * @param parts where the reads go
     */
    private static void collectConcatenatedReads(SpelNode node, List<KeyPart> parts) {
        if (!(node instanceof OpPlus) || node.getChildCount() != 2) {
            return;
        }
        for (int i = 0; i < node.getChildCount(); i++) {
            SpelNode operand = node.getChild(i);
            if (operand instanceof OpPlus) {
                collectConcatenatedReads(operand, parts);
            }
            else if (isPlainRead(operand)) {
                parts.add(new KeyPart(operand.toStringAST(), operand));
            }
        }
    }

    private static boolean isPlainRead(SpelNode node) {
        if (node instanceof VariableReference || node instanceof PropertyOrFieldReference) {
            return true;
        }
        if (node instanceof CompoundExpression || node instanceof Indexer) {
            for (int i = 0; i < node.getChildCount(); i++) {
                SpelNode child = node.getChild(i);
                if (!(child instanceof Literal) && !isPlainRead(child)) {
                    return false;
                }
            }
            return true;
        }
        return false;
    }

    /**
     * An unknown variable evaluates to {@code null} rather than failing, so a typo or missing
     * parameter names would otherwise give every call the same key, and one lock for all. A name
     * without {@code #} where the expression reads its context object (its head, a method
     * argument, an index) is a property of {@code #root}, which only has a few: a forgotten
     * {@code #} or an unquoted constant would otherwise fail every call.
     * @param onRoot whether {@code node} is read from the context object, not from the node before it
     * @param inElements whether {@code node} is inside a selection or projection, whose context
     * object is each element
     */
    private void checkKeyVariables(Method method, SpelNode node, boolean onRoot, boolean inElements, String key,
            String description) {
        if (node instanceof Assign || node instanceof OpInc || node instanceof OpDec) {
            throw invalid(description, "key '" + key + "' assigns to " + node.getChild(0).toStringAST()
                    + ": a lock key must not set variables or change state");
        }
        if (node instanceof FunctionReference) {
            String call = node.toStringAST();
            throw invalid(description, "key '" + key + "' calls " + call.substring(0, call.indexOf('(')) + "(), but "
                    + "no functions are registered for @DistributedLock keys: call a bean instead (@bean.method(...))");
        }
        if (node instanceof VariableReference) {
            checkVariable(method, node.toStringAST().substring(1), key, description);
        }
        if (node instanceof CompoundExpression && node.getChildCount() > 1 && isRoot(node.getChild(0))) {
            checkRootMember(node.getChild(1), key, description);
        }
        if (onRoot && !inElements) {
            checkBareName(method, node, key, description);
        }
        boolean childrenInElements = inElements || node instanceof Selection || node instanceof Projection;
        for (int i = 0; i < node.getChildCount(); i++) {
            // After the head of a.b.c, each part reads the value before it; a bare name as a map's
            // index (#m[name]) or an inline map's key ({name: 1}) is text.
            boolean childOnRoot = !(node instanceof CompoundExpression && i > 0) && !(node instanceof Indexer)
                    && !(node instanceof InlineMap && i % 2 == 0);
            checkKeyVariables(method, node.getChild(i), childOnRoot, childrenInElements, key, description);
        }
    }

    private void checkBareName(Method method, SpelNode node, String key, String description) {
        String name = unknownRootMember(node);
        if (name == null) {
            return;
        }
        String bare = name.endsWith("()") ? name.substring(0, name.length() - 2) : name;
        @Nullable String @Nullable [] names = this.parameterNames.getParameterNames(method);
        boolean parameter = names != null && Arrays.asList(names).contains(bare);
        // A key of bare words and signs (nightly-report) is most likely meant as constant text.
        String constant = key.matches("[^'\"#@()]*") ? key.strip() : bare;
        throw invalid(description, "key '" + key + "' references " + name + " without '#', which SpEL reads from "
                + "#root, and #root has only " + ROOT_PROPERTY_LIST + ((parameter) ? ": write the parameter as #" + bare
                        : ": write a parameter as #name, and constant text in quotes ('" + constant + "')"));
    }

    private void checkVariable(Method method, String name, String key, String description) {
        if (name.equals("root") || name.equals("this")) {
            return;
        }
        @Nullable String @Nullable [] names = this.parameterNames.getParameterNames(method);
        if (names != null && Arrays.asList(names).contains(name)) {
            return;
        }
        int count = method.getParameterCount();
        String references = "key '" + key + "' references #" + name + ", but ";
        Matcher position = POSITION.matcher(name);
        if (position.matches()) {
            int index = Integer.parseInt(position.group(1));
            if (index >= count) {
                throw invalid(description, references + description + ((count == 0) ? " has no parameters"
                        : " has " + count + " parameter" + ((count == 1) ? "" : "s") + " (#p0 to #p" + (count - 1)
                                + ", or #a0 to #a" + (count - 1) + ")"));
            }
            return;
        }
        if (names == null) {
            throw invalid(description, references + "the parameter names of " + description + " are not available: "
                    + "compile with -parameters (the Spring Boot parent does), or use #p0/#a0");
        }
        throw invalid(description, references + description + " has no parameter of that name ("
                + ((names.length == 0) ? "it has no parameters" : "its parameters are: " + String.join(", ", names))
                + ")");
    }

    private static boolean isRoot(SpelNode node) {
        return node instanceof VariableReference && node.toStringAST().equals("#root");
    }

    private static void checkRootMember(SpelNode member, String key, String description) {
        String name = unknownRootMember(member);
        if (name != null) {
            throw invalid(description, "key '" + key + "' references #root." + name + ", but #root has only "
                    + ROOT_PROPERTY_LIST);
        }
    }

    /**
     * @return the name of a property ({@code name}) or method ({@code name()}) that {@code member}
     * reads from {@code #root} and {@code #root} does not have, or {@code null}
     */
    private static @Nullable String unknownRootMember(SpelNode member) {
        if (member instanceof PropertyOrFieldReference property) {
            // The property accessor capitalizes the name to find the getter, so #root.Method works too.
            return ROOT_PROPERTIES.contains(StringUtils.uncapitalize(property.getName())) ? null : property.getName();
        }
        if (member instanceof MethodReference call) {
            return ROOT_METHODS.contains(call.getName()) ? null : call.getName() + "()";
        }
        return null;
    }

    private Duration parseWaitTimeout(String waitTimeout, String description) {
        if (waitTimeout.isEmpty()) {
            return this.defaultWaitTimeout;
        }
        String resolved;
        try {
            resolved = this.placeholders.resolveRequiredPlaceholders(waitTimeout).trim();
        }
        catch (IllegalArgumentException ex) {
            throw invalid(description, "waitTimeout '" + waitTimeout + "' cannot be resolved: " + ex.getMessage(), ex);
        }
        String shown = resolved.equals(waitTimeout) ? "'" + waitTimeout + "'"
                : "'" + waitTimeout + "' (resolved to '" + resolved + "')";
        Duration duration;
        try {
            duration = DurationStyle.detectAndParse(resolved);
        }
        catch (IllegalArgumentException ex) {
            throw invalid(description, "waitTimeout " + shown
                    + " is not a duration; use for example 500ms, 10s, 1m or PT10S", ex);
        }
        if (duration.isNegative()) {
            throw invalid(description, "waitTimeout " + shown + " is negative; use 0 to try once without waiting");
        }
        return duration;
    }

    private static String listed(List<String> names) {
        int last = names.size() - 1;
        return (last > 0) ? String.join(", ", names.subList(0, last)) + " and " + names.get(last) : names.get(0);
    }

    private static String describe(Method method) {
        String parameters = Arrays.stream(method.getParameterTypes())
            .map(Class::getSimpleName)
            .collect(Collectors.joining(", "));
        return method.getDeclaringClass().getName() + "." + method.getName() + "(" + parameters + ")";
    }

    private static InvalidLockOperationException invalid(String description, String problem) {
        return invalid(description, problem, null);
    }

    private static InvalidLockOperationException invalid(String description, String problem, @Nullable Throwable cause) {
        return new InvalidLockOperationException(description, problem, "Correct the @DistributedLock annotation on "
                + description + " as the description says (docs/annotation.md lists what each attribute takes).", cause);
    }
}
