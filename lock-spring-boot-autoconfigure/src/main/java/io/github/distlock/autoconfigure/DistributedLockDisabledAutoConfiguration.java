package io.github.distlock.autoconfigure;

import java.lang.reflect.Method;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.Set;
import java.util.stream.Collectors;

import io.github.distlock.annotation.DistributedLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.beans.BeansException;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.annotation.AnnotationUtils;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

/**
 * With {@code distributed-lock.enabled=false}, which switches the lock auto-configurations off,
 * says at start-up which {@link DistributedLock @DistributedLock} methods of the application's
 * beans will run without their lock, rather than let them do so silently.
 */
@AutoConfiguration
@ConditionalOnBooleanProperty(name = "distributed-lock.enabled", havingValue = false)
public final class DistributedLockDisabledAutoConfiguration {

    @Bean
    static UnlockedMethodsReport distributedLockUnlockedMethodsReport(ConfigurableListableBeanFactory beanFactory) {
        return new UnlockedMethodsReport(beanFactory);
    }

    /** Once every singleton exists: a WARN naming the annotated methods, if there are any. */
    static final class UnlockedMethodsReport implements SmartInitializingSingleton {

        private static final Logger logger = LoggerFactory.getLogger(DistributedLockDisabledAutoConfiguration.class);

        /** Methods named in the message, at most: the count says how many more there are. */
        private static final int NAMED = 10;

        private final ConfigurableListableBeanFactory beanFactory;

        UnlockedMethodsReport(ConfigurableListableBeanFactory beanFactory) {
            this.beanFactory = beanFactory;
        }

        @Override
        public void afterSingletonsInstantiated() {
            Set<String> unlocked = annotatedMethods();
            if (unlocked.isEmpty()) {
                return;
            }
            String named = unlocked.stream().limit(NAMED).collect(Collectors.joining(", "));
            // Woven with the AspectJ aspect, which no context configures now, they fail rather than run unlocked.
            logger.warn("distributed-lock.enabled=false: {} @DistributedLock method(s) run without their lock (or, "
                    + "woven with the AspectJ aspect, fail): {}{}", unlocked.size(), named,
                    (unlocked.size() > NAMED) ? ", ..." : "");
        }

        /** @return {@code Class.method(Parameters)} of every annotated method of the beans' classes, in bean order */
        Set<String> annotatedMethods() {
            Set<String> annotated = new LinkedHashSet<>();
            for (String name : this.beanFactory.getBeanDefinitionNames()) {
                Class<?> type;
                try {
                    // Without initializing a FactoryBean to learn what it makes: what it made is a singleton
                    // already, or lazy.
                    type = this.beanFactory.getType(name, false);
                }
                catch (BeansException ex) {
                    // A definition whose type cannot be told (abstract, or failing to resolve): nothing to say of it.
                    continue;
                }
                if (type == null) {
                    continue;
                }
                Class<?> userClass = ClassUtils.getUserClass(type);
                if (!AnnotationUtils.isCandidateClass(userClass, DistributedLock.class)) {
                    continue;
                }
                try {
                    ReflectionUtils.doWithMethods(userClass, (method) -> {
                        if (AnnotatedElementUtils.findMergedAnnotation(method, DistributedLock.class) != null) {
                            annotated.add(describe(userClass, method));
                        }
                    }, UnlockedMethodsReport::isCandidate);
                }
                catch (RuntimeException | LinkageError ex) {
                    // A class whose methods name a class missing from the class path: a report must not fail start-up.
                    logger.debug("Could not look for @DistributedLock methods of bean '{}': {}", name, ex.toString());
                }
            }
            return annotated;
        }

        private static String describe(Class<?> userClass, Method method) {
            return userClass.getName() + "." + method.getName() + Arrays.stream(method.getParameterTypes())
                .map(Class::getSimpleName)
                .collect(Collectors.joining(", ", "(", ")"));
        }

        private static boolean isCandidate(Method method) {
            return !method.isBridge() && !method.isSynthetic() && method.getDeclaringClass() != Object.class;
        }
    }
}
