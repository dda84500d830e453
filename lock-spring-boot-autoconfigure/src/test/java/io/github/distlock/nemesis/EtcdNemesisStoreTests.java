package io.github.distlock.nemesis;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class EtcdNemesisStoreTests {

    @Test
    void aResumedLeaderRevokesLeasesBefore3_4_28And3_5_11() {
        assertThat(EtcdNemesisStore.resumedLeaderRevokesLeases(new int[] { 3, 4, 23 })).isTrue();
        assertThat(EtcdNemesisStore.resumedLeaderRevokesLeases(new int[] { 3, 4, 27 })).isTrue();
        assertThat(EtcdNemesisStore.resumedLeaderRevokesLeases(new int[] { 3, 3, 30 })).isTrue();
        assertThat(EtcdNemesisStore.resumedLeaderRevokesLeases(new int[] { 3, 5, 10 })).isTrue();
        assertThat(EtcdNemesisStore.resumedLeaderRevokesLeases(new int[] { 3, 4, 28 })).isFalse();
        assertThat(EtcdNemesisStore.resumedLeaderRevokesLeases(new int[] { 3, 5, 11 })).isFalse();
        assertThat(EtcdNemesisStore.resumedLeaderRevokesLeases(new int[] { 3, 6, 0 })).isFalse();
    }

    @Test
    void theInstalledEtcdNamesItsVersion() {
        int[] version = EtcdNemesisStore.version();
        assertThat(version).hasSize(3);
        assertThat(version[0]).isEqualTo(3);
    }
}
