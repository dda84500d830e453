package io.github.distlock.autoconfigure;

import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.Method;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.asm.ClassReader;
import org.springframework.asm.ClassVisitor;
import org.springframework.asm.MethodVisitor;
import org.springframework.asm.Opcodes;
import org.springframework.asm.SpringAsmInfo;
import org.springframework.asm.Type;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;

/**
 * In proxy mode, says at start-up (one WARN per method) which {@code @DistributedLock} methods
 * their own class calls on {@code this}: such a call does not go through the proxy and runs
 * without the lock, silently. Found in the class files of the bean's class and its superclasses:
 * a call whose receiver is surely {@code this} ({@link ReceiverTracker}), so a call through an
 * injected reference to the bean (the cure) is not named. "May run without": a method that is
 * also annotated, and calls while holding the same key, loses nothing.
 */
final class SelfInvocationReport implements SmartInitializingSingleton {

    private static final Logger logger = LoggerFactory.getLogger(SelfInvocationReport.class);

    private final ConfigurableListableBeanFactory beanFactory;

    SelfInvocationReport(ConfigurableListableBeanFactory beanFactory) {
        this.beanFactory = beanFactory;
    }

    @Override
    public void afterSingletonsInstantiated() {
        AnnotatedBeanMethods.find(this.beanFactory).forEach((userClass, methods) -> selfCalls(userClass, methods)
            .forEach((called, callers) -> logger.warn("@DistributedLock method {} is called by its own class ({}): in "
                    + "proxy mode (distributed-lock.aop.mode=proxy, the default) a call on 'this' does not go through "
                    + "the proxy and may run without the lock. Call it through the bean (inject it), or use "
                    + "distributed-lock.aop.mode=aspectj", AnnotatedBeanMethods.describe(userClass, called),
                    String.join(", ", callers))));
    }

    /**
     * @return each annotated method that a method of {@code userClass} or its superclasses calls on
     * that class, with its callers' names, in name order; a method calling itself does not count
     */
    static Map<Method, Set<String>> selfCalls(Class<?> userClass, List<Method> annotated) {
        Map<String, Method> byNameAndDescriptor = new LinkedHashMap<>();
        for (Method method : annotated) {
            byNameAndDescriptor.put(method.getName() + Type.getMethodDescriptor(method), method);
        }
        Set<String> owners = new LinkedHashSet<>();
        for (Class<?> type = userClass; type != null && type != Object.class; type = type.getSuperclass()) {
            owners.add(Type.getInternalName(type));
        }
        Map<Method, Set<String>> calls = new LinkedHashMap<>();
        for (Class<?> type = userClass; type != null && type != Object.class; type = type.getSuperclass()) {
            ClassReader reader = classReader(type);
            if (reader == null) {
                continue;
            }
            try {
                reader.accept(new ClassVisitor(SpringAsmInfo.ASM_VERSION) {

                    @Override
                    public @Nullable MethodVisitor visitMethod(int access, String callerName, String callerDescriptor,
                            @Nullable String signature, String @Nullable [] exceptions) {
                        if ((access & Opcodes.ACC_BRIDGE) != 0) {
                            // A bridge (of a generic interface's method) calls the bridged method on 'this', but a
                            // call through the proxy is advised before it runs: not a self-invocation.
                            return null;
                        }
                        String caller = callerName + callerDescriptor;
                        return new ReceiverTracker(access) {

                            @Override
                            void instanceCall(String owner, String name, String descriptor, boolean onThis) {
                                Method called = byNameAndDescriptor.get(name + descriptor);
                                if (onThis && called != null && owners.contains(owner)
                                        && !caller.equals(name + descriptor)) {
                                    calls.computeIfAbsent(called, (key) -> new TreeSet<>()).add(callerName(callerName));
                                }
                            }
                        };
                    }
                }, ClassReader.SKIP_DEBUG | ClassReader.SKIP_FRAMES);
            }
            catch (RuntimeException ex) {
                // A class file this ASM cannot follow: no report for it, and no failed start-up.
                logger.debug("Could not read the class file of {}: {}", type.getName(), ex.toString());
            }
        }
        return calls;
    }

    /** {@code lambda$pay$0}, the body of a lambda in {@code pay}, as {@code pay}. */
    private static String callerName(String name) {
        if (name.startsWith("lambda$")) {
            int end = name.indexOf('$', "lambda$".length());
            return (end > 0) ? name.substring("lambda$".length(), end) : name;
        }
        return name;
    }

    private static @Nullable ClassReader classReader(Class<?> type) {
        ClassLoader loader = (type.getClassLoader() != null) ? type.getClassLoader() : ClassLoader.getSystemClassLoader();
        try (InputStream in = loader.getResourceAsStream(Type.getInternalName(type) + ".class")) {
            return (in != null) ? new ClassReader(in) : null;
        }
        catch (IOException | RuntimeException ex) {
            // A class file that cannot be read (or is newer than the ASM Spring ships): no report, no failure.
            logger.debug("Could not read the class file of {}: {}", type.getName(), ex.toString());
            return null;
        }
    }
}
