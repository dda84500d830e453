package io.github.distlock.sample.store;

import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import java.util.stream.LongStream;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import io.github.distlock.jdbc.TestDatabase;
import io.github.distlock.sample.SampleProperties;
import io.github.distlock.sample.store.SampleStore.FencedWrite;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * {@link JdbcSampleStore} on a real database, one subclass per kind: values, listings by prefix,
 * fenced writes (refused with the stored fence, atomic under concurrency), and the table created
 * where it is missing, also by several instances at once and after it was dropped. Each test keeps
 * its data under a prefix of its own, in the one table of the database.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
abstract class AbstractJdbcSampleStoreTests {

    /** The store timeout of the tests about it: short, so that they fail calls soon. */
    static final Duration TIMEOUT = Duration.ofSeconds(3);

    /**
     * The store timeout where calls should succeed: far above any call's time, also the first of
     * a new pool on a loaded machine, so that only a wrong answer fails these tests.
     */
    static final Duration PATIENT = Duration.ofSeconds(30);

    private final List<JdbcSampleStore> stores = new ArrayList<>();

    private final List<HikariDataSource> pools = new ArrayList<>();

    private String prefix;

    private JdbcSampleStore store;

    /** @return the database of the test class, started */
    protected abstract TestDatabase database();

    @BeforeEach
    void openStore() {
        this.prefix = "/test-" + UUID.randomUUID() + "/";
        this.store = store(this.prefix);
    }

    @AfterEach
    void closeStores() {
        this.stores.forEach(JdbcSampleStore::destroy);
        this.pools.forEach(HikariDataSource::close);
    }

    /** A store on a pool of its own, as another instance of the sample would have. */
    JdbcSampleStore store(String prefix) {
        return store(prefix, PATIENT);
    }

    /** A store on a pool of its own, with the given {@code sample.store.timeout}. */
    JdbcSampleStore store(String prefix, Duration timeout) {
        HikariDataSource pool = database().pool("sample-store", 4);
        this.pools.add(pool);
        return store(pool, prefix, timeout);
    }

    JdbcSampleStore store(DataSource dataSource, String prefix, Duration timeout) {
        JdbcSampleStore created = new JdbcSampleStore(dataSource,
                new SampleProperties("test", false, new SampleProperties.Store(prefix, timeout), null, null, null, null));
        this.stores.add(created);
        return created;
    }

    @Test
    void createWritesOnlyWhereNothingIsAndPutWritesAnyway() {
        assertThat(this.store.get("stock/sku-1")).isEmpty();
        assertThat(this.store.create("stock/sku-1", "5")).isTrue();
        assertThat(this.store.create("stock/sku-1", "7")).isFalse();
        assertThat(this.store.get("stock/sku-1")).contains("5");
        this.store.put("stock/sku-1", "4");
        this.store.put("stock/sku-2", "9");
        assertThat(this.store.get("stock/sku-1")).contains("4");
        assertThat(this.store.get("stock/sku-2")).contains("9");
        // The row's path is the prefix and the path, as an etcd or Redis key would be.
        assertThat(this.store.get("Stock/sku-1")).as("paths differing in case are distinct").isEmpty();
        assertThat(store("/other/").get("stock/sku-1")).isEmpty();
    }

    @Test
    void listReturnsThePathsUnderAPrefixInPathOrderTakingLikeWildcardsLiterally() {
        this.store.put("a_b/2", "two");
        this.store.put("a_b/1", "one");
        this.store.put("a_b/ü", "umlaut");
        this.store.put("axb/3", "not under a_b/");
        this.store.put("a%b/4", "not under a_b/");
        this.store.put("a!b/5", "not under a_b/");
        this.store.put("A_B/6", "not under a_b/");
        this.store.put("a_b", "the prefix without its slash");
        assertThat(this.store.list("a_b/")).containsExactly(Map.entry("1", "one"), Map.entry("2", "two"),
                Map.entry("ü", "umlaut"));
        assertThat(this.store.list("a%b/")).containsExactly(Map.entry("4", "not under a_b/"));
        assertThat(this.store.list("a!b/")).containsExactly(Map.entry("5", "not under a_b/"));
        assertThat(this.store.list("nothing/")).isEmpty();
        assertThat(this.store.list("")).hasSize(8);
        // Another prefix (another deployment of the sample in the same table) sees none of it.
        assertThat(store("/other-" + UUID.randomUUID() + "/").list("")).isEmpty();
    }

    @Test
    void aFencedWriteNeedsAGreaterFenceThanTheLastAcceptedOneAndTellsTheStoredFenceOtherwise() {
        assertThat(this.store.createFenced("orders/1001", "new")).isTrue();
        assertThat(this.store.createFenced("orders/1001", "again")).isFalse();
        assertThat(this.store.putFenced("orders/1001", "paid at 7", 7)).isEqualTo(FencedWrite.WRITTEN);
        assertThat(this.store.putFenced("orders/1001", "paid at 7 again", 7)).isEqualTo(FencedWrite.stale(7));
        assertThat(this.store.putFenced("orders/1001", "late writer", 5)).isEqualTo(FencedWrite.stale(7));
        assertThat(this.store.get("orders/1001")).contains("paid at 7");
        assertThat(this.store.putFenced("orders/1001", "paid at 9", 9)).isEqualTo(FencedWrite.WRITTEN);
        assertThat(this.store.get("orders/1001")).contains("paid at 9");
        // A plain write leaves the fence alone.
        this.store.put("orders/1001", "overwritten");
        assertThat(this.store.putFenced("orders/1001", "late writer", 8)).isEqualTo(FencedWrite.stale(9));
    }

    @Test
    void aFencedWriteWhereNoFencedValueIsChangesNothing() {
        assertThat(this.store.putFenced("orders/none", "paid", 3)).isEqualTo(FencedWrite.MISSING);
        assertThat(this.store.get("orders/none")).isEmpty();
        assertThat(this.store.create("orders/plain", "plain")).isTrue();
        assertThat(this.store.putFenced("orders/plain", "paid", 3)).isEqualTo(FencedWrite.MISSING);
        assertThat(this.store.get("orders/plain")).contains("plain");
    }

    @Test
    void concurrentFencedWritesFromSeveralInstancesLeaveTheValueOfTheGreatestFence() throws Exception {
        assertThat(this.store.createFenced("orders/race", "v0")).isTrue();
        List<JdbcSampleStore> instances = List.of(this.store, store(this.prefix), store(this.prefix));
        List<Long> fences = new ArrayList<>(LongStream.rangeClosed(1, 60).boxed().toList());
        Collections.shuffle(fences);
        ExecutorService writers = Executors.newFixedThreadPool(6);
        try {
            List<CompletableFuture<FencedWrite>> writes = IntStream.range(0, fences.size())
                .mapToObj(i -> CompletableFuture.supplyAsync(() -> instances.get(i % instances.size())
                    .putFenced("orders/race", "v" + fences.get(i), fences.get(i)), writers))
                .toList();
            List<FencedWrite> outcomes = writes.stream().map(write -> write.orTimeout(60, TimeUnit.SECONDS).join()).toList();
            assertThat(outcomes).contains(FencedWrite.WRITTEN);
            // A refused write saw a fence at least its own, never a missing value.
            for (int i = 0; i < outcomes.size(); i++) {
                FencedWrite outcome = outcomes.get(i);
                if (!outcome.written()) {
                    assertThat(outcome.storedFence()).isNotNull().isGreaterThanOrEqualTo(fences.get(i));
                }
            }
        }
        finally {
            writers.shutdownNow();
        }
        // Value and fence were written together: the value is the one written with the greatest fence.
        assertThat(this.store.get("orders/race")).contains("v60");
        assertThat(this.store.putFenced("orders/race", "late", 60)).isEqualTo(FencedWrite.stale(60));
    }

    @Test
    void theTableIsCreatedWhereMissingAlsoByInstancesStartingAtOnceAndAgainAfterItWasDropped() throws Exception {
        dropTable();
        List<JdbcSampleStore> instances = IntStream.range(0, 4).mapToObj(i -> store(this.prefix)).toList();
        ExecutorService starters = Executors.newFixedThreadPool(instances.size());
        try {
            List<CompletableFuture<Boolean>> creates = IntStream.range(0, instances.size())
                .mapToObj(i -> CompletableFuture.supplyAsync(() -> instances.get(i).create("item/" + i, "x"), starters))
                .toList();
            assertThat(creates).allSatisfy(create -> assertThat(create.orTimeout(60, TimeUnit.SECONDS).join()).isTrue());
        }
        finally {
            starters.shutdownNow();
        }
        assertThat(this.store.list("item/")).containsOnlyKeys("0", "1", "2", "3");

        dropTable();
        // The first call may find the table gone (503 for that request); the next one creates it again.
        try {
            this.store.put("item/again", "x");
        }
        catch (StoreUnavailableException ex) {
            this.store.put("item/again", "x");
        }
        assertThat(this.store.list("item/")).containsOnlyKeys("again");
    }

    private void dropTable() throws SQLException {
        database().execute("DROP TABLE IF EXISTS " + JdbcSampleStore.TABLE);
    }

    static void assertUnavailableWithin(Duration bound, Runnable call, String message) {
        long start = System.nanoTime();
        assertThatExceptionOfType(StoreUnavailableException.class).isThrownBy(call::run).withMessageContaining(message);
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(bound);
    }
}
