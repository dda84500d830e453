package io.github.distlock.autoconfigure;

import io.github.distlock.web.LockProblemDetailsExceptionHandler;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication.Type;
import org.springframework.context.annotation.Bean;
import org.springframework.http.ProblemDetail;

/**
 * In a Spring MVC application, answers a request whose {@code @DistributedLock} method could not
 * get its lock with a problem detail: 409 when the lock was held for the whole wait, 503 when the
 * lock store is unavailable (see {@link LockProblemDetailsExceptionHandler}). An exception handler
 * of the application for {@code LockAcquisitionException} takes precedence; a
 * {@link LockProblemDetailsExceptionHandler} bean replaces this one.
 */
@AutoConfiguration(after = DistributedLockAutoConfiguration.class)
@ConditionalOnDistributedLockEnabled
@ConditionalOnWebApplication(type = Type.SERVLET)
@ConditionalOnClass(value = ProblemDetail.class, name = "org.springframework.web.servlet.DispatcherServlet")
public final class DistributedLockWebMvcAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    LockProblemDetailsExceptionHandler lockProblemDetailsExceptionHandler() {
        return new LockProblemDetailsExceptionHandler();
    }
}
