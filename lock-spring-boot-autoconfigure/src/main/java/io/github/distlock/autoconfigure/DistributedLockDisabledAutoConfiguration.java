package io.github.distlock.autoconfigure;

import java.util.LinkedHashSet;
import java.util.Set;
import java.util.stream.Collectors;

import io.github.distlock.annotation.DistributedLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.context.annotation.Bean;

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
            AnnotatedBeanMethods.find(this.beanFactory)
                .forEach((userClass, methods) -> methods
                    .forEach((method) -> annotated.add(AnnotatedBeanMethods.describe(userClass, method))));
            return annotated;
        }
    }
}
