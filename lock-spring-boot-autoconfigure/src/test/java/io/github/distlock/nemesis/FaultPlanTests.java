package io.github.distlock.nemesis;

import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import io.github.distlock.nemesis.FaultPlan.Action;
import io.github.distlock.nemesis.FaultPlan.Fault;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class FaultPlanTests {

    private static final Map<Action, Integer> STORE = Map.of(Action.KILL_MEMBER, 20, Action.PAUSE_MEMBER, 20,
            Action.DELETE_ENTRIES, 20, Action.NETWORK_WORKER, 15);

    private static FaultPlan plan(long seed, Map<Action, Integer> weights) {
        return FaultPlan.generate(seed, Duration.ofMinutes(5), 4, 3, Duration.ofSeconds(3), weights);
    }

    @Test
    void aSeedNamesOnePlan() {
        assertThat(plan(42, STORE)).isEqualTo(plan(42, Map.of(Action.NETWORK_WORKER, 15, Action.DELETE_ENTRIES, 20,
                Action.PAUSE_MEMBER, 20, Action.KILL_MEMBER, 20)));
        assertThat(plan(42, STORE)).isNotEqualTo(plan(43, STORE));
    }

    @Test
    void theFirstFaultsGoThroughEveryActionOfTheStoreAndNoOtherIsDrawn() {
        List<Fault> faults = plan(7, STORE).faults();
        Set<Action> expected = EnumSet.of(Action.PAUSE_WORKER, Action.KILL_WORKER, Action.NETWORK_WORKER,
                Action.KILL_MEMBER, Action.PAUSE_MEMBER, Action.DELETE_ENTRIES);
        assertThat(faults.stream().limit(expected.size()).map(Fault::action).collect(Collectors.toSet()))
            .isEqualTo(expected);
        assertThat(faults.stream().map(Fault::action).collect(Collectors.toSet())).isEqualTo(expected);
        assertThat(faults).hasSizeGreaterThan(100);
    }

    @Test
    void oneStoreFaultAtATimeAndOneFaultPerWorkerSlot() {
        for (long seed = 0; seed < 20; seed++) {
            List<Fault> faults = plan(seed, Map.of(Action.KILL_MEMBER, 20, Action.RESTART_EMPTY, 10,
                    Action.CLOCK_STEP, 10, Action.NETWORK_WORKER, 30, Action.DELETE_ENTRIES, 5)).faults();
            long storeFreeAt = 0;
            long[] slotFreeAt = new long[4];
            for (Fault fault : faults) {
                assertThat(fault.endMillis()).isLessThanOrEqualTo(Duration.ofMinutes(5).toMillis());
                assertThat(fault.variant()).isBetween(0, 999);
                if (fault.action().onStoreMember()) {
                    assertThat(fault.startMillis()).as("seed %d: %s", seed, fault).isGreaterThanOrEqualTo(storeFreeAt);
                    storeFreeAt = fault.endMillis();
                }
                if (fault.action().onWorker()) {
                    assertThat(fault.startMillis()).as("seed %d: %s", seed, fault)
                        .isGreaterThanOrEqualTo(slotFreeAt[fault.target()]);
                    slotFreeAt[fault.target()] = fault.endMillis();
                }
            }
        }
    }

    @Test
    void aStoreCannotWeighTheWorkersOwnFaults() {
        assertThatIllegalArgumentException().isThrownBy(() -> plan(1, Map.of(Action.KILL_WORKER, 10)))
            .withMessageContaining("KILL_WORKER");
        assertThatIllegalArgumentException().isThrownBy(() -> plan(1, Map.of(Action.KILL_MEMBER, -1)))
            .withMessageContaining("KILL_MEMBER");
    }
}
