package io.github.distlock.testsupport;

import java.lang.annotation.Documented;
import java.lang.annotation.Inherited;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;

/**
 * Marks a test class of the fault-injection suite: tests that kill, freeze or restart real JVM
 * and etcd processes. They run in every build and alone with
 * {@code mvn -B -Pfault-injection -pl lock-spring-boot-autoconfigure verify}. Each test is bounded,
 * so a fault that makes something hang fails the test instead of the build timing out.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
@Tag(FaultInjectionTest.TAG)
@Timeout(value = 5, unit = java.util.concurrent.TimeUnit.MINUTES)
public @interface FaultInjectionTest {

    /** The JUnit tag of the suite. */
    String TAG = "fault-injection";
}
