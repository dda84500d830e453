package io.github.distlock.etcd;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** {@link EtcdCalls.Attempts}: the first answer of any attempt counts; failed attempts leave nothing behind. */
class EtcdCallsTests {

    @Test
    void failedAttemptsLeaveNoListenerOnTheFirstAnswer() {
        EtcdCalls.Attempts<String> attempts = new EtcdCalls.Attempts<>();
        for (int i = 0; i < 100; i++) {
            CompletableFuture<String> failed = CompletableFuture.failedFuture(new IllegalStateException("no leader"));
            assertThat(attempts.send(failed)).isCompletedExceptionally();
        }
        // Before, each failed attempt left one until an answer came (an untimed wait on a failing
        // etcd gained five a second).
        assertThat(attempts.firstAnswer().getNumberOfDependents()).as("listeners on the first answer")
            .isLessThanOrEqualTo(1);
    }

    @Test
    void everyAttemptAnswersWithTheFirstAnswerAndLaterOnesAreTold() {
        List<String> later = new ArrayList<>();
        EtcdCalls.Attempts<String> attempts = new EtcdCalls.Attempts<>(
                (late, first) -> later.add(late + " after " + first));
        CompletableFuture<String> first = new CompletableFuture<>();
        CompletableFuture<String> second = new CompletableFuture<>();
        CompletableFuture<String> firstsAnswer = attempts.send(first);
        CompletableFuture<String> secondsAnswer = attempts.send(second);
        second.complete("b");
        assertThat(secondsAnswer).isCompletedWithValue("b");
        first.complete("a");
        assertThat(firstsAnswer).isCompletedWithValue("b");
        assertThat(later).containsExactly("a after b");
        assertThat(attempts.send(new CompletableFuture<>())).as("sent after the first answer")
            .isCompletedWithValue("b");
    }
}
