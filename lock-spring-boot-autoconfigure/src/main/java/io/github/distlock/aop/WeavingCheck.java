package io.github.distlock.aop;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import io.github.distlock.annotation.DistributedLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.aop.support.AopUtils;
import org.springframework.util.ReflectionUtils;

/**
 * Warns at start-up, in {@code distributed-lock.aop.mode=aspectj}, of {@code @DistributedLock}
 * methods of beans that the AspectJ weaver did not weave: no proxy is made in that mode, so such a
 * method runs without its lock, and nothing else says so. A warning rather than a failure: tests
 * commonly run without the weaving agent that production uses.
 *
 * <p>Woven code is recognized by what the weaver adds to a method's class for around advice: a
 * static {@code <method>_aroundBody<n>} method taking the method's parameters. Which aspect wove it
 * cannot be read by reflection, so a method woven only by another aspect (a {@code @Transactional}
 * one of spring-aspects, say) passes for woven.
 */
public final class WeavingCheck {

    private static final Logger logger = LoggerFactory.getLogger(WeavingCheck.class);

    private final LockOperationSource operations;

    private final Set<Class<?>> checked = ConcurrentHashMap.newKeySet();

    /**
     * Creates a check.
     * @param operations where the annotations are read, as the aspect's interceptor reads them
     */
    public WeavingCheck(LockOperationSource operations) {
        this.operations = operations;
    }

    /**
     * Checks the {@code @DistributedLock} methods of a bean's class, once per class, and logs a
     * warning naming those not woven, and why.
     * @param targetClass the bean's class
     * @param beanName the bean's name, for the message
     */
    public void check(Class<?> targetClass, String beanName) {
        if (!this.operations.hasOperations(targetClass) || !this.checked.add(targetClass)) {
            return;
        }
        List<String> unwoven = unwovenMethods(targetClass);
        if (!unwoven.isEmpty()) {
            logger.warn("In distributed-lock.aop.mode=aspectj these @DistributedLock methods of bean '{}' are not "
                    + "woven with {} and run without their lock: {}", beanName, DistributedLockAspect.class.getName(),
                    String.join("; ", unwoven));
        }
    }

    /** @return each annotated method of {@code targetClass} that is not woven, with why */
    List<String> unwovenMethods(Class<?> targetClass) {
        List<String> unwoven = new ArrayList<>();
        ReflectionUtils.doWithMethods(targetClass, (method) -> {
            // An overridden method never runs on this bean: its override is checked instead.
            if (!AopUtils.getMostSpecificMethod(method, targetClass).equals(method)) {
                return;
            }
            LockOperation operation = this.operations.getOperation(method, targetClass);
            if (operation != null && !isWoven(method)) {
                unwoven.add(operation.description() + " (" + whyNotWoven(method) + ")");
            }
        }, (method) -> !method.isBridge() && !method.isSynthetic());
        return unwoven;
    }

    private static boolean isWoven(Method method) {
        String body = method.getName() + "_aroundBody";
        List<Class<?>> parameters = Arrays.asList(method.getParameterTypes());
        return Arrays.stream(method.getDeclaringClass().getDeclaredMethods())
            .anyMatch((declared) -> declared.getName().startsWith(body)
                    && Collections.indexOfSubList(Arrays.asList(declared.getParameterTypes()), parameters) >= 0);
    }

    private static String whyNotWoven(Method method) {
        if (!method.isAnnotationPresent(DistributedLock.class)) {
            return "the aspect matches only methods that carry @DistributedLock themselves, not through an interface "
                    + "method, an overridden method or a composed annotation";
        }
        boolean classWoven = Arrays.stream(method.getDeclaringClass().getDeclaredMethods())
            .anyMatch((declared) -> declared.getName().startsWith("ajc$"));
        return classWoven ? "the weaver left this method of a woven class alone"
                : "its class is not woven: start the JVM with the AspectJ agent and a META-INF/aop.xml that includes "
                        + "the class and the aspect, or weave it at compile time";
    }
}
