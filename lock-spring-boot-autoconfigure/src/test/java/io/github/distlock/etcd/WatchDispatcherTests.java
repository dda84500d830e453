package io.github.distlock.etcd;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

import com.google.protobuf.ByteString;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.api.Event;
import io.etcd.jetcd.api.KeyValue;
import io.etcd.jetcd.api.ResponseHeader;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchResponse;
import io.github.distlock.store.StoreUnavailableException;
import io.github.distlock.store.Wait;
import org.awaitility.core.ConditionFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * The watch dispatcher's generations, dispatch and progress probe, against a scripted jetcd
 * {@link Watch} client: each test plays etcd's side by calling the listener the dispatcher handed
 * to {@code watch(...)}. The scheduler is real (one thread) and records what it is given, so the
 * reopen pause and the probe period are read back rather than assumed.
 */
class WatchDispatcherTests {

    /** Long enough that no probe runs in the tests that are not about probing. */
    private static final long NO_PROBE = TimeUnit.HOURS.toNanos(1);

    private static final long PROBE = TimeUnit.MILLISECONDS.toNanos(100);

    private static final long REOPEN_DELAY = TimeUnit.MILLISECONDS.toNanos(250);

    private static final Duration PATIENCE = Duration.ofSeconds(5);

    private final EtcdKeyspace keyspace = new EtcdKeyspace("/locks/");

    private final ScriptedWatch watch = new ScriptedWatch();

    private final RecordingScheduler scheduler = new RecordingScheduler();

    private WatchDispatcher dispatcher;

    @AfterEach
    void closeDispatcher() {
        if (this.dispatcher != null) {
            this.dispatcher.close();
        }
        this.scheduler.shutdownNow();
    }

    @Test
    void ensureOpenCompletesWhenEtcdAcknowledgesTheStream() {
        this.dispatcher = dispatcher(NO_PROBE);
        CompletableFuture<Void> ready = this.dispatcher.ensureOpen();

        assertThat(ready).isNotDone();
        assertThat(this.watch.streams).hasSize(1);
        Stream stream = this.watch.stream(0);
        assertWatchesDeletionsInTheNamespace(stream, 0);

        assertThat(this.dispatcher.ensureOpen()).isSameAs(ready);
        stream.progress(5);
        assertThat(ready).isNotDone();
        stream.created(7);
        assertThat(ready).isCompleted();
        assertThat(this.dispatcher.ensureOpen()).isCompleted();
        assertThat(this.watch.streams).hasSize(1);
    }

    @Test
    void theFirstOpenCallsIntoJetcdWithoutHoldingTheDispatchersLock() {
        this.dispatcher = dispatcher(NO_PROBE);
        // As jetcd may: call the listener from another thread and wait for it while inside watch(...).
        CompletableFuture<Boolean> callbackReturned = new CompletableFuture<>();
        this.watch.duringWatchCall = listener -> {
            CompletableFuture<Void> callback = CompletableFuture.runAsync(
                    () -> listener.onError(new IllegalStateException("stream reset by jetcd")));
            try {
                callback.get(2, TimeUnit.SECONDS);
                callbackReturned.complete(true);
            }
            catch (Exception ex) {
                // Timed out: the callback is blocked on a lock that the caller of watch(...) holds.
                callbackReturned.complete(false);
            }
            this.watch.duringWatchCall = ignored -> {
            };
        };
        CompletableFuture<Void> ready = this.dispatcher.ensureOpen();
        assertThat(callbackReturned).isCompletedWithValue(true);
        assertThat(this.watch.streams).hasSize(1);
        assertThat(ready).isNotDone();
    }

    @Test
    void onlyTheCurrentStreamsAcknowledgementReleasesCallers() {
        this.dispatcher = dispatcher(NO_PROBE);
        CompletableFuture<Void> first = this.dispatcher.ensureOpen();
        Stream old = this.watch.stream(0);
        // Ends before etcd acknowledged it: the stream that replaces it releases the callers.
        old.listener.onCompleted();
        Stream current = awaitStream(1);
        CompletableFuture<Void> second = this.dispatcher.ensureOpen();

        old.created(5);
        assertThat(first).isNotDone();
        assertThat(second).isNotDone();

        current.created(6);
        assertThat(first).isCompleted();
        assertThat(second).isCompleted();
    }

    @Test
    void deliversDeletionsOnlyToTheListenersOfTheEntrysRoot() throws Exception {
        Stream stream = openStream(NO_PROBE);
        RecordingListener a1 = subscribe("a");
        RecordingListener a2 = subscribe("a");
        RecordingListener aSlashB = subscribe("a/b");
        RecordingListener b = subscribe("b");
        ByteSequence entryOfA = EtcdKeyspace.entry(this.keyspace.root("a"), 0x1f, 2);

        stream.events(20, delete(entryOfA, 18), put(EtcdKeyspace.entry(this.keyspace.root("b"), 0x1f, 3), 19),
                delete(EtcdKeyspace.entry(new EtcdKeyspace("/other/").root("b"), 0x1f, 4), 20),
                delete(EtcdKeyspace.entry(new EtcdKeyspace("/locks/orders/").root("b"), 0x1f, 5), 20),
                delete(this.keyspace.root("b"), 20));

        assertThat(a1.deletions).containsExactly(new Deletion(entryOfA, 18));
        assertThat(a2.deletions).containsExactly(new Deletion(entryOfA, 18));
        assertThat(aSlashB.deletions).isEmpty();
        assertThat(b.deletions).isEmpty();
        assertThat(List.of(a1, a2, aSlashB, b)).allSatisfy(listener -> assertThat(listener.resyncs).hasValue(0));
    }

    @Test
    void deliversCreationsOfEntriesToTheListenersOfTheirRootAndIgnoresOtherPuts() throws Exception {
        Stream stream = openStream(NO_PROBE);
        RecordingListener a = subscribe("a");
        RecordingListener b = subscribe("b");
        ByteSequence created = EtcdKeyspace.entry(this.keyspace.root("a"), 0x1f, 2);
        ByteSequence rewritten = EtcdKeyspace.entry(this.keyspace.root("a"), 0x1f, 3);

        stream.events(31, put(created, 30, 30, 1), put(rewritten, 31, 12, 2));

        assertThat(a.creations).containsExactly(new Deletion(created, 30));
        assertThat(a.deletions).isEmpty();
        assertThat(b.creations).isEmpty();
    }

    @Test
    void anUnsubscribedListenerHearsNothingMore() throws Exception {
        Stream stream = openStream(NO_PROBE);
        RecordingListener leaving = subscribe("a");
        RecordingListener staying = subscribe("a");
        ByteSequence root = this.keyspace.root("a");
        ByteSequence first = EtcdKeyspace.entry(root, 1, 1);
        ByteSequence second = EtcdKeyspace.entry(root, 1, 2);

        this.dispatcher.unsubscribe(root, leaving);
        this.dispatcher.unsubscribe(this.keyspace.root("b"), staying);
        stream.events(11, delete(first, 11));
        this.dispatcher.unsubscribe(root, staying);
        stream.events(12, delete(second, 12));

        assertThat(leaving.deletions).isEmpty();
        assertThat(staying.deletions).containsExactly(new Deletion(first, 11));
    }

    @Test
    void aSubscriberThatGaveUpWaitingForTheStreamIsNotLeftSubscribed() throws Exception {
        this.dispatcher = dispatcher(NO_PROBE);
        ByteSequence root = this.keyspace.root("a");
        RecordingListener timedOut = new RecordingListener();
        RecordingListener interrupted = new RecordingListener();

        assertThatExceptionOfType(StoreUnavailableException.class)
            .isThrownBy(() -> this.dispatcher.subscribe(root, timedOut, Wait.timeout(TimeUnit.MILLISECONDS.toNanos(20), true)))
            .withMessageContaining("watch creation");
        Thread.currentThread().interrupt();
        assertThatExceptionOfType(InterruptedException.class)
            .isThrownBy(() -> this.dispatcher.subscribe(root, interrupted, Wait.timeout(PATIENCE.toNanos(), true)));
        Stream stream = this.watch.stream(0);
        stream.created(10);
        stream.events(11, delete(EtcdKeyspace.entry(root, 1, 1), 11));

        assertThat(timedOut.deletions).isEmpty();
        assertThat(interrupted.deletions).isEmpty();
        assertThat(this.watch.streams).hasSize(1);
    }

    @Test
    void anErrorMakesEveryListenerResyncAndNewCallersWaitForTheNextAcknowledgement() throws Exception {
        Stream stream = openStream(NO_PROBE);
        RecordingListener a = subscribe("a");
        RecordingListener b = subscribe("b");

        stream.listener.onError(new IllegalStateException("connection reset"));
        CompletableFuture<Void> afterError = this.dispatcher.ensureOpen();
        stream.listener.onError(new IllegalStateException("connection reset again"));

        assertThat(a.resyncs).hasValue(2);
        assertThat(b.resyncs).hasValue(2);
        assertThat(afterError).isNotDone();
        assertThat(this.dispatcher.ensureOpen()).isNotDone();
        // jetcd resumes the stream itself: no new watch, the old one stays open.
        assertThat(this.watch.streams).hasSize(1);
        assertThat(stream.closed).isFalse();

        stream.created(12);
        assertThat(afterError).isCompleted();
        assertThat(this.dispatcher.ensureOpen()).isCompleted();
    }

    @Test
    void anEndedStreamIsReopenedAfterAPauseFromTheRevisionAfterTheLastDeliveredEvent() throws Exception {
        Stream ended = openStream(NO_PROBE);
        RecordingListener a = subscribe("a");
        RecordingListener b = subscribe("b");
        ended.events(42, delete(EtcdKeyspace.entry(this.keyspace.root("a"), 1, 1), 42));
        // A progress report's revision may run ahead of events not sent yet: it must not move the resume point.
        ended.progress(100);

        long endedAt = System.nanoTime();
        ended.listener.onCompleted();
        Stream reopened = awaitStream(1);

        assertThat(this.scheduler.delays).contains(REOPEN_DELAY);
        assertThat(reopened.openedAt - endedAt).isGreaterThanOrEqualTo(REOPEN_DELAY);
        assertWatchesDeletionsInTheNamespace(reopened, 43);
        awaiting().untilAsserted(() -> {
            assertThat(ended.closed).isTrue();
            assertThat(a.resyncs).hasValue(1);
            assertThat(b.resyncs).hasValue(1);
        });
        CompletableFuture<Void> ready = this.dispatcher.ensureOpen();
        assertThat(ready).isNotDone();
        reopened.created(43);
        assertThat(ready).isCompleted();
    }

    @Test
    void aStreamThatEndsBeforeAnyEventResumesAfterItsCreationRevision() {
        Stream ended = openStream(NO_PROBE);

        ended.listener.onCompleted();

        assertWatchesDeletionsInTheNamespace(awaitStream(1), 11);
    }

    @Test
    void theEndOrFailureOfAnOlderStreamChangesNothing() throws Exception {
        Stream old = openStream(NO_PROBE);
        RecordingListener a = subscribe("a");
        old.listener.onCompleted();
        Stream current = awaitStream(1);
        current.created(11);
        awaiting().untilAsserted(() -> assertThat(a.resyncs).hasValue(1));
        int scheduled = this.scheduler.delays.size();

        old.listener.onCompleted();
        assertThat(this.scheduler.delays).hasSize(scheduled);
        assertThat(a.resyncs).hasValue(1);
        old.listener.onError(new IllegalStateException("late failure of a closed stream"));
        assertThat(this.dispatcher.ensureOpen()).isCompleted();
        assertThat(current.closed).isFalse();
        assertThat(this.watch.streams).hasSize(2);
    }

    @Test
    void aSilentStreamThatAnswersTheProgressRequestIsKept() throws Exception {
        this.watch.answerProgressRequests = asked -> asked.progress(10);
        long start = System.nanoTime();
        Stream stream = openStream(PROBE);
        RecordingListener a = subscribe("a");

        awaiting().until(() -> stream.progressRequests.size() >= 2);

        assertThat(this.scheduler.delays.get(0)).isEqualTo(PROBE / 2);
        assertThat(stream.progressRequests.get(0) - start).isGreaterThanOrEqualTo(PROBE);
        assertThat(this.watch.streams).hasSize(1);
        assertThat(stream.closed).isFalse();
        assertThat(a.resyncs).hasValue(0);
    }

    @Test
    void aSilentStreamThatDoesNotAnswerIsReopenedAndEveryListenerResyncs() throws Exception {
        long start = System.nanoTime();
        Stream silent = openStream(PROBE);
        RecordingListener a = subscribe("a");
        RecordingListener b = subscribe("b");
        silent.events(42, delete(EtcdKeyspace.entry(this.keyspace.root("a"), 1, 1), 42));

        Stream reopened = awaitStream(1);

        assertThat(silent.progressRequests).hasSize(1);
        assertThat(reopened.openedAt - start).isGreaterThanOrEqualTo(2 * PROBE);
        assertWatchesDeletionsInTheNamespace(reopened, 43);
        awaiting().untilAsserted(() -> {
            assertThat(silent.closed).isTrue();
            assertThat(a.resyncs).hasValue(1);
            assertThat(b.resyncs).hasValue(1);
        });
    }

    @Test
    void anAnswerOnAnOlderStreamIsNoAnswer() throws Exception {
        // Every request is answered by the first stream: while it is current that counts, after it ended it must not.
        this.watch.answerProgressRequests = asked -> this.watch.stream(0).progress(11);
        Stream old = openStream(PROBE);
        subscribe("a");
        old.listener.onCompleted();
        Stream current = awaitStream(1);
        current.created(11);

        Stream reopened = awaitStream(2);

        assertThat(current.progressRequests).hasSize(1);
        assertWatchesDeletionsInTheNamespace(reopened, 12);
        awaiting().until(() -> current.closed);
    }

    @Test
    void nobodyListeningMeansNoProgressRequests() throws Exception {
        Stream stream = openStream(PROBE);

        awaiting().until(() -> this.scheduler.probesRun() >= 5);
        assertThat(stream.progressRequests).isEmpty();
        assertThat(this.watch.streams).hasSize(1);

        subscribe("a");
        awaiting().until(() -> !stream.progressRequests.isEmpty());
    }

    @Test
    void closeClosesTheStreamAndFailsLaterCalls() throws Exception {
        Stream stream = openStream(NO_PROBE);
        RecordingListener a = subscribe("a");

        this.dispatcher.close();

        assertThat(stream.closed).isTrue();
        assertThat(this.dispatcher.ensureOpen()).isCompletedExceptionally();
        assertThatExceptionOfType(StoreUnavailableException.class)
            .isThrownBy(() -> this.dispatcher.subscribe(this.keyspace.root("b"), new RecordingListener(),
                    Wait.timeout(PATIENCE.toNanos(), true)))
            .withMessageContaining("registry is closed");
        stream.listener.onCompleted();
        assertThat(this.scheduler.delays).doesNotContain(REOPEN_DELAY);
        assertThat(this.watch.streams).hasSize(1);
        assertThat(a.resyncs).hasValue(0);
    }

    @Test
    void closeStopsTheProbe() {
        openStream(PROBE);
        awaiting().until(() -> this.scheduler.probesRun() >= 1);

        this.dispatcher.close();

        // While the dispatcher is open one probe is always pending, so the counts differ.
        awaiting().until(() -> this.scheduler.probesRun() == this.scheduler.probesScheduled());
    }

    @Test
    void closeBeforeTheFirstOpenNeverWatches() {
        this.dispatcher = dispatcher(NO_PROBE);

        this.dispatcher.close();

        assertThat(this.dispatcher.ensureOpen()).isCompletedExceptionally();
        assertThat(this.watch.streams).isEmpty();
    }

    private WatchDispatcher dispatcher(long probeNanos) {
        this.scheduler.probeDelay = probeNanos / 2;
        return new WatchDispatcher(this.watch, this.keyspace, this.scheduler, probeNanos);
    }

    /** A dispatcher whose stream etcd acknowledged at revision 10. */
    private Stream openStream(long probeNanos) {
        this.dispatcher = dispatcher(probeNanos);
        this.dispatcher.ensureOpen();
        Stream stream = this.watch.stream(0);
        stream.created(10);
        return stream;
    }

    private RecordingListener subscribe(String lockKey) throws Exception {
        RecordingListener listener = new RecordingListener();
        this.dispatcher.subscribe(this.keyspace.root(lockKey), listener, Wait.timeout(PATIENCE.toNanos(), true));
        return listener;
    }

    /** Puts too: a holder learns from an entry's creation that someone queued behind it. */
    private void assertWatchesDeletionsInTheNamespace(Stream stream, long fromRevision) {
        assertThat(stream.key).isEqualTo(this.keyspace.locksPrefix());
        assertThat(stream.option.isPrefix()).isTrue();
        assertThat(stream.option.isNoPut()).isFalse();
        assertThat(stream.option.isCreatedNotify()).isTrue();
        assertThat(stream.option.withRequireLeader()).isTrue();
        assertThat(stream.option.getRevision()).as("start revision").isEqualTo(fromRevision);
    }

    private static ConditionFactory awaiting() {
        return await().atMost(PATIENCE).pollInterval(Duration.ofMillis(5));
    }

    private Stream awaitStream(int index) {
        awaiting().until(() -> this.watch.streams.size() > index);
        return this.watch.stream(index);
    }

    private static Event delete(ByteSequence key, long modRevision) {
        return event(Event.EventType.DELETE, key, modRevision);
    }

    private static Event put(ByteSequence key, long modRevision) {
        return event(Event.EventType.PUT, key, modRevision);
    }

    private static Event put(ByteSequence key, long modRevision, long createRevision, long version) {
        return Event.newBuilder()
            .setType(Event.EventType.PUT)
            .setKv(KeyValue.newBuilder()
                .setKey(ByteString.copyFrom(key.getBytes()))
                .setModRevision(modRevision)
                .setCreateRevision(createRevision)
                .setVersion(version))
            .build();
    }

    private static Event event(Event.EventType type, ByteSequence key, long modRevision) {
        return Event.newBuilder()
            .setType(type)
            .setKv(KeyValue.newBuilder().setKey(ByteString.copyFrom(key.getBytes())).setModRevision(modRevision))
            .build();
    }

    private static io.etcd.jetcd.api.WatchResponse.Builder response(long revision) {
        return io.etcd.jetcd.api.WatchResponse.newBuilder().setHeader(ResponseHeader.newBuilder().setRevision(revision));
    }

    /** The jetcd client side: records every watch the dispatcher opens. */
    private static final class ScriptedWatch implements Watch {

        final List<Stream> streams = new CopyOnWriteArrayList<>();

        /** What etcd does when a stream is asked for progress: by default, nothing. */
        volatile Consumer<Stream> answerProgressRequests = asked -> {
        };

        /** What jetcd does inside {@code watch(...)} before returning: by default, nothing. */
        volatile Consumer<Listener> duringWatchCall = listener -> {
        };

        @Override
        public Watcher watch(ByteSequence key, WatchOption option, Listener listener) {
            this.duringWatchCall.accept(listener);
            Stream stream = new Stream(this, key, option, listener);
            this.streams.add(stream);
            return stream;
        }

        @Override
        public void requestProgress() {
            throw new UnsupportedOperationException("the dispatcher asks its own watcher for progress");
        }

        Stream stream(int index) {
            return this.streams.get(index);
        }
    }

    /** One {@code watch(...)} call: what was asked for, the listener to play etcd with, and the watcher handed back. */
    private static final class Stream implements Watch.Watcher {

        private final ScriptedWatch client;

        final ByteSequence key;

        final WatchOption option;

        final Watch.Listener listener;

        final long openedAt = System.nanoTime();

        /** When progress was requested (nanoTime). */
        final List<Long> progressRequests = new CopyOnWriteArrayList<>();

        volatile boolean closed;

        Stream(ScriptedWatch client, ByteSequence key, WatchOption option, Watch.Listener listener) {
            this.client = client;
            this.key = key;
            this.option = option;
            this.listener = listener;
        }

        void created(long revision) {
            WatchResponse response = new WatchResponse(response(revision).setCreated(true).build());
            assertThat(response.isCreatedNotify()).isTrue();
            this.listener.onNext(response);
        }

        void progress(long revision) {
            WatchResponse response = new WatchResponse(response(revision).build());
            assertThat(response.isProgressNotify()).isTrue();
            this.listener.onNext(response);
        }

        void events(long revision, Event... events) {
            this.listener.onNext(new WatchResponse(response(revision).addAllEvents(List.of(events)).build()));
        }

        @Override
        public void requestProgress() {
            this.progressRequests.add(System.nanoTime());
            this.client.answerProgressRequests.accept(this);
        }

        /** As jetcd's watcher does, tells the listener it completed (jetcd does so holding its own lock). */
        @Override
        public synchronized void close() {
            if (!this.closed) {
                this.closed = true;
                this.listener.onCompleted();
            }
        }

        @Override
        public boolean isClosed() {
            return this.closed;
        }
    }

    /** A real single-thread scheduler that records every delay it is given and counts the probes it ran. */
    private static final class RecordingScheduler extends ScheduledThreadPoolExecutor {

        final List<Long> delays = new CopyOnWriteArrayList<>();

        private final AtomicInteger probesRun = new AtomicInteger();

        volatile long probeDelay;

        RecordingScheduler() {
            super(1);
        }

        @Override
        public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
            long nanos = unit.toNanos(delay);
            this.delays.add(nanos);
            return super.schedule(() -> {
                command.run();
                if (nanos == this.probeDelay) {
                    this.probesRun.incrementAndGet();
                }
            }, delay, unit);
        }

        int probesRun() {
            return this.probesRun.get();
        }

        long probesScheduled() {
            return this.delays.stream().filter(delay -> delay == this.probeDelay).count();
        }
    }

    private record Deletion(ByteSequence key, long revision) {
    }

    private static final class RecordingListener implements WatchDispatcher.Listener {

        final List<Deletion> deletions = new CopyOnWriteArrayList<>();

        /** Creations, recorded with their create revision. */
        final List<Deletion> creations = new CopyOnWriteArrayList<>();

        final AtomicInteger resyncs = new AtomicInteger();

        @Override
        public void deleted(ByteSequence etcdKey, long revision) {
            this.deletions.add(new Deletion(etcdKey, revision));
        }

        @Override
        public void created(ByteSequence etcdKey, long createRevision) {
            this.creations.add(new Deletion(etcdKey, createRevision));
        }

        @Override
        public void resync() {
            this.resyncs.incrementAndGet();
        }
    }
}
