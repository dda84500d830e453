package io.github.distlock.testsupport;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Predicate;

import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedStackTrace;
import jdk.jfr.consumer.RecordingFile;

/**
 * A JFR recording of every {@code jdk.VirtualThreadPinned} event (threshold 0, with stack traces),
 * for child JVMs of JDK 21 or later that run virtual threads through the locks (see
 * {@link VirtualThreadJdk} for the test's side). The test classes target Java 17, so virtual
 * threads are made through reflection ({@link #virtualThreadFactory}).
 *
 * <p>A canary shows that the recording sees pinning: {@link #pinCanary()}, called once per JVM on a
 * virtual thread after {@link #start()}, parks inside a class initializer, which pins the carrier
 * on every JDK. Its events are counted apart from the others.
 *
 * <p>{@link #stop} sorts the other events: {@linkplain #isTolerated tolerated} ones (printed as
 * {@code TOLERATED} with three frames), those the caller's predicate counts (printed as
 * {@code PINNED <blocking operation> | <reason> | <thread> | <duration>} followed by indented stack
 * frames) and the rest ({@code ELSEWHERE}, three frames).
 */
public final class PinnedThreadRecording {

    /** The JFR event of a virtual thread that blocked while pinned to its carrier. */
    public static final String PINNED_EVENT = "jdk.VirtualThreadPinned";

    private static final String OUR_PACKAGE = "io.github.distlock.";

    private static final int SHOWN_FRAMES = 40;

    private final Recording recording;

    private PinnedThreadRecording(Recording recording) {
        this.recording = recording;
    }

    /** @return a recording of every pinned event, started */
    public static PinnedThreadRecording start() {
        Recording recording = new Recording();
        recording.enable(PINNED_EVENT).withThreshold(Duration.ZERO).withStackTrace();
        recording.start();
        return new PinnedThreadRecording(recording);
    }

    /**
     * Stops the recording, writes it to {@code file}, prints the events as the class comment says and
     * counts them.
     * @param file where the recording goes
     * @param counted which events (other than the canary's and the tolerated ones) count as pinning
     * @return the counts
     */
    public Summary stop(Path file, Predicate<RecordedEvent> counted) throws IOException {
        this.recording.stop();
        this.recording.dump(file);
        this.recording.close();
        int pinned = 0;
        int tolerated = 0;
        int elsewhere = 0;
        int canaryPinned = 0;
        int canaryCounted = 0;
        for (RecordedEvent event : RecordingFile.readAllEvents(file)) {
            if (!event.getEventType().getName().equals(PINNED_EVENT)) {
                continue;
            }
            if (isCanary(event)) {
                canaryPinned++;
                if (counted.test(event)) {
                    canaryCounted++;
                }
            }
            else if (isTolerated(event)) {
                tolerated++;
                print("TOLERATED", event, 3);
            }
            else if (counted.test(event)) {
                pinned++;
                print("PINNED", event, SHOWN_FRAMES);
            }
            else {
                elsewhere++;
                print("ELSEWHERE", event, 3);
            }
        }
        return new Summary(pinned, tolerated, elsewhere, canaryPinned, canaryCounted);
    }

    /** @return a predicate that counts every event */
    public static Predicate<RecordedEvent> everyEvent() {
        return (event) -> true;
    }

    /**
     * Counts the events whose stack has a frame of distlock's code: a class of
     * {@code io.github.distlock}, other than those under the given test packages.
     * @param testPackages prefixes of test-only packages whose frames do not count, such as the
     * package of the application under test ({@code io.github.distlock.autoconfigure.app.})
     * @return the predicate
     */
    public static Predicate<RecordedEvent> throughDistlockCode(String... testPackages) {
        List<String> excluded = List.of(testPackages);
        return (event) -> frames(event).stream()
            .map((frame) -> frame.getMethod().getType().getName())
            .anyMatch((type) -> type.startsWith(OUR_PACKAGE) && excluded.stream().noneMatch(type::startsWith));
    }

    /**
     * A pinned event that says nothing about waits or store calls: a contended monitor entered by
     * code that is not ours (the bins of a {@code ConcurrentHashMap}, a class loader's lock), held
     * for a few instructions, or a wait for another thread to initialize a class, once per class.
     * A monitor of our own, and any park, sleep or wait while pinned, is not tolerated. (The fields
     * that tell these apart exist since JDK 24; on older JDKs every event counts.)
     */
    private static boolean isTolerated(RecordedEvent event) {
        String blocking = event.hasField("blockingOperation") ? event.getString("blockingOperation") : null;
        String reason = event.hasField("pinnedReason") ? event.getString("pinnedReason") : null;
        if (reason != null && reason.startsWith("Waited for initialization of ")) {
            return true;
        }
        if (!"Contended monitor enter".equals(blocking)) {
            return false;
        }
        List<RecordedFrame> frames = frames(event);
        // The first frame is the method that enters the monitor.
        return !frames.isEmpty() && !frames.get(0).getMethod().getType().getName().startsWith(OUR_PACKAGE);
    }

    private static boolean isCanary(RecordedEvent event) {
        return frames(event).stream()
            .anyMatch((frame) -> frame.getMethod().getType().getName().equals(PinCanary.class.getName()));
    }

    private static List<RecordedFrame> frames(RecordedEvent event) {
        RecordedStackTrace stack = event.getStackTrace();
        return (stack != null) ? stack.getFrames() : List.of();
    }

    private static void print(String label, RecordedEvent event, int shownFrames) {
        String blocking = event.hasField("blockingOperation") ? event.getString("blockingOperation") : "?";
        String reason = event.hasField("pinnedReason") ? event.getString("pinnedReason") : "?";
        String thread = (event.getThread() != null) ? event.getThread().getJavaName() : "?";
        System.out.println(label + " " + blocking + " | " + reason + " | " + thread + " | " + event.getDuration());
        List<RecordedFrame> frames = frames(event);
        for (RecordedFrame frame : frames.subList(0, Math.min(shownFrames, frames.size()))) {
            System.out.println("    at " + frame.getMethod().getType().getName() + "." + frame.getMethod().getName()
                    + " line " + frame.getLineNumber());
        }
    }

    /**
     * Parks in a class initializer, which pins the carrier of a virtual thread on every JDK: call it
     * once per JVM, on a virtual thread, while recording (later calls do nothing).
     */
    public static void pinCanary() {
        PinCanary.touch();
    }

    /**
     * {@code Thread.ofVirtual().name(prefix, 0).factory()}, through reflection.
     * @param prefix the threads' name prefix, followed by a counter
     * @return the factory
     */
    public static ThreadFactory virtualThreadFactory(String prefix) {
        try {
            Class<?> builderType = Class.forName("java.lang.Thread$Builder");
            Object builder = Thread.class.getMethod("ofVirtual").invoke(null);
            builder = builderType.getMethod("name", String.class, long.class).invoke(builder, prefix, 0L);
            return (ThreadFactory) builderType.getMethod("factory").invoke(builder);
        }
        catch (ReflectiveOperationException ex) {
            throw new IllegalStateException("No virtual threads in Java " + Runtime.version(), ex);
        }
    }

    /** @return whether {@code thread} is virtual ({@code Thread.isVirtual()}, through reflection) */
    public static boolean isVirtual(Thread thread) {
        try {
            return (Boolean) Thread.class.getMethod("isVirtual").invoke(thread);
        }
        catch (ReflectiveOperationException ex) {
            throw new IllegalStateException("No virtual threads in Java " + Runtime.version(), ex);
        }
    }

    /**
     * The counts of one recording.
     * @param pinned events the predicate counted, not tolerated, not the canary's
     * @param tolerated events of class initialization waits and of monitors that are not ours
     * @param elsewhere other events the predicate did not count
     * @param canaryPinned events of the canary
     * @param canaryCounted events of the canary that the predicate counts
     */
    public record Summary(int pinned, int tolerated, int elsewhere, int canaryPinned, int canaryCounted) {

        /** @return {@code pinned=<n> tolerated=<n> elsewhere=<n> canaryPinned=<n> canaryCounted=<n>} */
        public String fields() {
            return "pinned=" + this.pinned + " tolerated=" + this.tolerated + " elsewhere=" + this.elsewhere
                    + " canaryPinned=" + this.canaryPinned + " canaryCounted=" + this.canaryCounted;
        }
    }

    /** Its initializer parks: a virtual thread blocked in a class initializer pins its carrier on every JDK. */
    static final class PinCanary {

        static {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
        }

        private PinCanary() {
        }

        static void touch() {
            // Loading the class runs its initializer.
        }
    }
}
