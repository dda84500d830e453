package io.github.distlock.autoconfigure;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import io.github.distlock.annotation.DistributedLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.BeansException;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.annotation.AnnotationUtils;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

/** The {@link DistributedLock @DistributedLock} methods of the beans' classes, for start-up reports. */
final class AnnotatedBeanMethods {

    private static final Logger logger = LoggerFactory.getLogger(AnnotatedBeanMethods.class);

    private AnnotatedBeanMethods() {
    }

    /**
     * @param beanFactory the application's bean factory
     * @return each bean class (the user class, not a proxy's) with its annotated methods, in bean order
     */
    static Map<Class<?>, List<Method>> find(ConfigurableListableBeanFactory beanFactory) {
        Map<Class<?>, List<Method>> annotated = new LinkedHashMap<>();
        for (String name : beanFactory.getBeanDefinitionNames()) {
            Class<?> type;
            try {
                // Without initializing a FactoryBean to learn what it makes: what it made is a singleton
                // already, or lazy.
                type = beanFactory.getType(name, false);
            }
            catch (BeansException ex) {
                // A definition whose type cannot be told (abstract, or failing to resolve): nothing to say of it.
                continue;
            }
            if (type == null) {
                continue;
            }
            Class<?> userClass = ClassUtils.getUserClass(type);
            if (annotated.containsKey(userClass) || !AnnotationUtils.isCandidateClass(userClass, DistributedLock.class)) {
                continue;
            }
            List<Method> methods = new ArrayList<>();
            try {
                ReflectionUtils.doWithMethods(userClass, (method) -> {
                    if (AnnotatedElementUtils.findMergedAnnotation(method, DistributedLock.class) != null) {
                        methods.add(method);
                    }
                }, AnnotatedBeanMethods::isCandidate);
            }
            catch (RuntimeException | LinkageError ex) {
                // A class whose methods name a class missing from the class path: a report must not fail start-up.
                logger.debug("Could not look for @DistributedLock methods of bean '{}': {}", name, ex.toString());
            }
            if (!methods.isEmpty()) {
                annotated.put(userClass, methods);
            }
        }
        return annotated;
    }

    /** @return {@code Class.method(Parameters)}, with simple parameter type names */
    static String describe(Class<?> userClass, Method method) {
        return userClass.getName() + "." + method.getName() + Arrays.stream(method.getParameterTypes())
            .map(Class::getSimpleName)
            .collect(Collectors.joining(", ", "(", ")"));
    }

    private static boolean isCandidate(Method method) {
        return !method.isBridge() && !method.isSynthetic() && method.getDeclaringClass() != Object.class;
    }
}
