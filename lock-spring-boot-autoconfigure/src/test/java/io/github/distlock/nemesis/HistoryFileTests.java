package io.github.distlock.nemesis;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;

import io.github.distlock.nemesis.HistoryEvent.Call;
import io.github.distlock.nemesis.HistoryEvent.Failure;
import io.github.distlock.nemesis.HistoryEvent.FaultHeal;
import io.github.distlock.nemesis.HistoryEvent.FaultKind;
import io.github.distlock.nemesis.HistoryEvent.FaultStart;
import io.github.distlock.nemesis.HistoryEvent.Grant;
import io.github.distlock.nemesis.HistoryEvent.LossReport;
import io.github.distlock.nemesis.HistoryEvent.Refusal;
import io.github.distlock.nemesis.HistoryEvent.RegisterWrite;
import io.github.distlock.nemesis.HistoryEvent.Release;
import io.github.distlock.nemesis.HistoryEvent.Request;
import io.github.distlock.nemesis.HistoryEvent.RunStart;
import io.github.distlock.nemesis.HistoryEvent.StoreObservation;
import io.github.distlock.nemesis.HistoryEvent.Unlocking;
import io.github.distlock.nemesis.HistoryEvent.WorkerKilled;
import io.github.distlock.nemesis.HistoryReader.Recording;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/** Histories go from worker threads to files and back unchanged, merged in time order. */
class HistoryFileTests {

    /** A key with every character the line format escapes, an {@code =}, a pair and a lone surrogate. */
    private static final String AWKWARD_KEY = "orders/a=b\tc\\d\ne\rf \uD83D\uDD12 lone \uD800 end";

    @TempDir
    Path directory;

    @Test
    void everyEventRoundTripsThroughAFile() throws IOException {
        List<HistoryEvent> events = List.of(new RunStart(100, "runner", -42, "etcd", 1_700_000_000_000L),
                new Request(101, "w1", "worker-1", "w1:1", AWKWARD_KEY, true, Call.TRY_LOCK_TIMEOUT, 1000),
                new Grant(102, "w1", "w1:1", 4096L << 10),
                new RegisterWrite(103, "w1", "w1:1", AWKWARD_KEY, 4096L << 10, false, 5000L << 10),
                new Unlocking(104, "w1", "w1:1"), new Release(104, "w1", "w1:1", true),
                new Refusal(105, "w1", "w1:2", Failure.TIMEOUT, "Timed out after 1000 ms waiting for 'a'\n held by w2"),
                new LossReport(106, "w1", AWKWARD_KEY, 4096L << 10, (4096L << 10) | 3, 4, "lease expired"),
                new FaultStart(107, "runner", "f1", FaultKind.DELETE_ENTRIES, "etcd-0", true),
                new FaultHeal(108, "runner", "f1"), new WorkerKilled(109, "runner", "w1"),
                new StoreObservation(110, "runner", 1, 0, "/distributed-lock/a/1234 held by w3"));
        Path file = this.directory.resolve("w1.history");
        try (HistoryWriter writer = HistoryWriter.open(file)) {
            events.forEach(writer::record);
        }
        assertThat(Files.readAllLines(file)).hasSize(events.size());
        Recording read = HistoryReader.readDirectory(this.directory);
        assertThat(read.events()).containsExactlyElementsOf(events);
        assertThat(read.tornLines()).isZero();
    }

    @Test
    void filesOfSeveralProcessesMergeInTimeOrder() throws IOException {
        write("runner.history", new RunStart(1, "runner", 7, "redis", 0), new WorkerKilled(40, "runner", "w2"));
        write("w1.history", new Request(10, "w1", "t", "w1:1", "a", false, Call.LOCK, -1),
                new Grant(30, "w1", "w1:1", 9));
        write("w2.history", new Request(20, "w2", "t", "w2:1", "a", false, Call.LOCK, -1));
        assertThat(HistoryReader.readDirectory(this.directory).events()).extracting(HistoryEvent::at)
            .containsExactly(1L, 10L, 20L, 30L, 40L);
    }

    @Test
    void tornLastLineOfAKilledProcessIsDroppedAndCounted() throws IOException {
        Path file = write("w1.history", new Request(10, "w1", "t", "w1:1", "a", false, Call.LOCK, -1),
                new Grant(30, "w1", "w1:1", 4096));
        // SIGKILL in the middle of a write: the fence 4096 was cut to 40, and no newline followed.
        String torn = HistoryLines.format(new Release(40, "w1", "w1:1", false)).substring(0, 20);
        Files.writeString(file, torn, StandardOpenOption.APPEND);
        Recording read = HistoryReader.read(List.of(file));
        assertThat(read.events()).extracting(HistoryEvent::type).containsExactly("request", "grant");
        assertThat(read.tornLines()).isOne();
    }

    @Test
    void malformedWholeLineFailsTheReadNamingFileAndLine() throws IOException {
        Path file = write("w1.history", new Grant(30, "w1", "w1:1", 4096));
        Files.writeString(file, "at=31\tev=grant\tproc=w1\top=w1:2\tfence=forty\n", StandardOpenOption.APPEND);
        assertThatIllegalArgumentException().isThrownBy(() -> HistoryReader.read(List.of(file)))
            .withMessageContaining("w1.history line 2").withMessageContaining("'fence' is not a number");
    }

    @Test
    void concurrentThreadsWriteWholeLines() throws Exception {
        Path file = this.directory.resolve("w1.history");
        int threads = 4;
        int perThread = 500;
        try (HistoryWriter writer = HistoryWriter.open(file)) {
            List<Thread> started = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                String thread = "t" + t;
                Thread writing = new Thread(() -> {
                    for (int i = 0; i < perThread; i++) {
                        writer.record(new Grant(System.nanoTime(), "w1", thread + ":" + i, i));
                    }
                });
                writing.start();
                started.add(writing);
            }
            for (Thread thread : started) {
                thread.join();
            }
        }
        List<HistoryEvent> events = HistoryReader.read(List.of(file)).events();
        assertThat(events).hasSize(threads * perThread);
        assertThat(events).extracting((event) -> ((Grant) event).op()).doesNotHaveDuplicates();
        assertThat(Files.readString(file, StandardCharsets.UTF_8)).endsWith("\n");
    }

    private Path write(String name, HistoryEvent... events) throws IOException {
        Path file = this.directory.resolve(name);
        try (HistoryWriter writer = HistoryWriter.open(file)) {
            for (HistoryEvent event : events) {
                writer.record(event);
            }
        }
        return file;
    }
}
