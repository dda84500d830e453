package io.github.distlock.web;

import java.time.Duration;

import io.github.distlock.LockAcquisitionException;
import io.github.distlock.LockAcquisitionException.Reason;
import io.github.distlock.LockRegistry;
import io.github.distlock.annotation.DistributedLock;
import io.github.distlock.autoconfigure.DistributedLockAutoConfiguration;
import io.github.distlock.autoconfigure.DistributedLockWebMvcAutoConfiguration;
import io.github.distlock.testsupport.BackgroundHolder;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.assertj.AssertableWebApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.context.annotation.AnnotatedBeanDefinitionReader;
import org.springframework.context.annotation.AnnotationConfigRegistry;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.ClassPathBeanDefinitionScanner;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.setup.MockMvcBuilders;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.bind.annotation.RestControllerAdvice;
import org.springframework.web.context.support.GenericWebApplicationContext;
import org.springframework.web.servlet.config.annotation.EnableWebMvc;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.post;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.content;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * A request whose {@code @DistributedLock} method cannot get its lock gets a problem detail with
 * a status a client can act on: 409 while another request holds the lock, 503 while the store is
 * unavailable, never a bare 500; and the application's own handler takes precedence.
 */
class LockProblemDetailsExceptionHandlerTests {

    private static final Duration LONG = Duration.ofSeconds(30);

    private final WebApplicationContextRunner webApplication = new WebApplicationContextRunner(
            WebApplicationContextRunner.withMockServletContext(AnnotationConfigWebContext::new))
        .withConfiguration(AutoConfigurations.of(DistributedLockAutoConfiguration.class,
                DistributedLockWebMvcAutoConfiguration.class))
        .withPropertyValues("distributed-lock.store=in-memory")
        .withUserConfiguration(WebApplication.class);

    @Test
    void aLockHeldForTheWholeWaitAnswers409WithAProblemDetail() {
        this.webApplication.run((context) -> {
            assertThat(context).hasSingleBean(LockProblemDetailsExceptionHandler.class);
            MockMvc mvc = mvc(context);
            BackgroundHolder holder = BackgroundHolder.hold(context.getBean(LockRegistry.class).obtain("order-7"), LONG,
                    "other-request");
            try {
                String body = mvc.perform(post("/orders/7/pay"))
                    .andExpect(status().isConflict())
                    .andExpect(content().contentTypeCompatibleWith(MediaType.APPLICATION_PROBLEM_JSON))
                    .andReturn()
                    .getResponse()
                    .getContentAsString();
                JsonNode problem = JsonMapper.builder().build().readTree(body);
                assertThat(problem.get("status").asInt()).isEqualTo(409);
                assertThat(problem.get("title").asString()).isEqualTo("Locked");
                assertThat(problem.get("code").asString()).isEqualTo("lock-busy");
                assertThat(problem.get("waitedMillis").asLong()).isGreaterThanOrEqualTo(300);
                assertThat(problem.has("key")).isFalse();
                assertThat(problem.has("holder")).isFalse();
                assertThat(body).doesNotContain("other-request").doesNotContain("order-7");
            }
            finally {
                holder.release();
            }
            mvc.perform(post("/orders/7/pay")).andExpect(status().isOk()).andExpect(content().string("paid 7"));
        });
    }

    @Test
    void theApplicationsOwnHandlerTakesPrecedence() {
        this.webApplication.withUserConfiguration(OwnHandler.class).run((context) -> {
            BackgroundHolder holder = BackgroundHolder.hold(context.getBean(LockRegistry.class).obtain("order-8"), LONG,
                    "other-request");
            try {
                mvc(context).perform(post("/orders/8/pay"))
                    .andExpect(status().isLocked())
                    .andExpect(content().string("busy: order-8"));
            }
            finally {
                holder.release();
            }
        });
    }

    @Test
    void aBeanOfTheApplicationReplacesTheHandler() {
        this.webApplication.withBean("ownProblemDetails", LockProblemDetailsExceptionHandler.class,
                LockProblemDetailsExceptionHandler::new)
            .run((context) -> assertThat(context).hasSingleBean(LockProblemDetailsExceptionHandler.class)
                .hasBean("ownProblemDetails"));
    }

    @Test
    void onlyInAServletWebApplicationWithLocksEnabled() {
        new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(DistributedLockAutoConfiguration.class,
                    DistributedLockWebMvcAutoConfiguration.class))
            .withPropertyValues("distributed-lock.store=in-memory")
            .run((context) -> assertThat(context).hasNotFailed()
                .doesNotHaveBean(LockProblemDetailsExceptionHandler.class));
        this.webApplication.withPropertyValues("distributed-lock.enabled=false")
            .run((context) -> assertThat(context).doesNotHaveBean(LockProblemDetailsExceptionHandler.class));
    }

    @ParameterizedTest
    @EnumSource(value = Reason.class, names = "TIMED_OUT", mode = EnumSource.Mode.EXCLUDE)
    void everyOtherReasonAnswers503(Reason reason) {
        ResponseEntity<ProblemDetail> answer = new LockProblemDetailsExceptionHandler()
            .lockNotAcquired(new LockAcquisitionException(reason, "order-9", Duration.ofMillis(1_200), "host:42",
                    "etcd at [http://10.0.0.1:2379] is unavailable", null));
        assertThat(answer.getStatusCode()).isEqualTo(HttpStatus.SERVICE_UNAVAILABLE);
        ProblemDetail problem = answer.getBody();
        assertThat(problem).isNotNull();
        assertThat(problem.getStatus()).isEqualTo(503);
        assertThat(problem.getTitle()).isEqualTo("Lock store unavailable");
        assertThat(problem.getProperties()).containsEntry("code", "lock-store-unavailable")
            .containsEntry("waitedMillis", 1_200L);
        assertThat(problem.getDetail()).doesNotContain("10.0.0.1").doesNotContain("host:42").doesNotContain("order-9");
    }

    @Test
    void theOldConstructorTellsTheReasonByTheCause() {
        assertThat(new LockAcquisitionException("k", Duration.ZERO, null, "held", null).getReason())
            .isEqualTo(Reason.TIMED_OUT);
        assertThat(new LockAcquisitionException("k", Duration.ZERO, null, "down", new IllegalStateException("x"))
            .getReason()).isEqualTo(Reason.STORE_UNAVAILABLE);
    }

    private static MockMvc mvc(AssertableWebApplicationContext context) {
        return MockMvcBuilders.webAppContextSetup(context).build();
    }

    /** A servlet web application context that takes configuration classes, as Spring Boot's does. */
    static class AnnotationConfigWebContext extends GenericWebApplicationContext implements AnnotationConfigRegistry {

        private final AnnotatedBeanDefinitionReader reader = new AnnotatedBeanDefinitionReader(this);

        private final ClassPathBeanDefinitionScanner scanner = new ClassPathBeanDefinitionScanner(this);

        @Override
        public void register(Class<?>... componentClasses) {
            this.reader.register(componentClasses);
        }

        @Override
        public void scan(String... basePackages) {
            this.scanner.scan(basePackages);
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableWebMvc
    static class WebApplication {

        @Bean
        OrderController orderController() {
            return new OrderController();
        }
    }

    @RestController
    static class OrderController {

        @PostMapping("/orders/{id}/pay")
        @DistributedLock(key = "'order-' + #id", waitTimeout = "300ms")
        String pay(@org.springframework.web.bind.annotation.PathVariable("id") String id) {
            return "paid " + id;
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnHandler {

        @Bean
        OwnLockHandler ownLockHandler() {
            return new OwnLockHandler();
        }
    }

    @RestControllerAdvice
    static class OwnLockHandler {

        @ExceptionHandler
        ResponseEntity<String> busy(LockAcquisitionException failure) {
            return ResponseEntity.status(HttpStatus.LOCKED).body("busy: " + failure.getKey());
        }
    }
}
