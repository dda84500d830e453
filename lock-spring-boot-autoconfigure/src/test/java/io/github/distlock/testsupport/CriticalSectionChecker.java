package io.github.distlock.testsupport;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Records critical-section entries and exits, and writes to a fenced resource, in the order they
 * happened, and checks the lock's guarantees on the record: no two holders inside at once, fences
 * that strictly increase from one entry to the next, no accepted write from a holder that a later
 * holder has superseded, and every expected iteration completed.
 *
 * <p>In one JVM, record with {@link #enter}, {@link #exit} and {@link #write} from the threads
 * that hold the lock: the record is serialized by this object, so its order is the real order.
 * Across JVMs, have each process append lines to one journal file (see {@link #parseLine}) and
 * {@link #replay} the file: one write per line to a file opened in append mode lands whole and in
 * order.
 */
public final class CriticalSectionChecker {

    private final List<Event> events = new ArrayList<>();

    private final long originNanos = System.nanoTime();

    /** Records that {@code thread} of {@code process} entered with {@code fence}, timed now. */
    public synchronized void enter(String process, String thread, long fence) {
        this.events.add(new Event(Kind.ENTER, process, thread, fence, nowMillis(), true));
    }

    /** Records that {@code thread} of {@code process} is about to leave, timed now. */
    public synchronized void exit(String process, String thread, long fence) {
        this.events.add(new Event(Kind.EXIT, process, thread, fence, nowMillis(), true));
    }

    /** Records a write with {@code fence} and whether the resource accepted it. */
    public synchronized void write(String process, String thread, long fence, boolean accepted) {
        this.events.add(new Event(Kind.WRITE, process, thread, fence, nowMillis(), accepted));
    }

    /** Records the events of a journal, in order; see {@link #parseLine}. */
    public synchronized void replay(List<String> journalLines) {
        for (int i = 0; i < journalLines.size(); i++) {
            String line = journalLines.get(i);
            if (!line.isBlank()) {
                try {
                    this.events.add(parseLine(line));
                }
                catch (IllegalArgumentException ex) {
                    throw new IllegalArgumentException("journal line " + (i + 1) + ": " + ex.getMessage(), ex);
                }
            }
        }
    }

    /**
     * Parses one journal line: {@code <process> ENTER|EXIT <thread> <fence> <epoch millis>} or
     * {@code <process> WRITE <thread> <fence> <epoch millis> ACCEPTED|REJECTED}.
     */
    public static Event parseLine(String line) {
        String[] words = line.trim().split(" ");
        Kind kind;
        try {
            kind = Kind.valueOf(words[1]);
        }
        catch (RuntimeException ex) {
            throw new IllegalArgumentException("no event kind in '" + line + "'", ex);
        }
        int expectedWords = (kind == Kind.WRITE) ? 6 : 5;
        if (words.length != expectedWords) {
            throw new IllegalArgumentException("expected " + expectedWords + " words in '" + line + "'");
        }
        boolean accepted = kind != Kind.WRITE || switch (words[5]) {
            case "ACCEPTED" -> true;
            case "REJECTED" -> false;
            default -> throw new IllegalArgumentException("expected ACCEPTED or REJECTED in '" + line + "'");
        };
        return new Event(kind, words[0], words[2], Long.parseLong(words[3]), Long.parseLong(words[4]), accepted);
    }

    /** The journal line of an event at {@code epochMillis}, as {@link #parseLine} reads it. */
    public static String journalLine(Kind kind, String process, String thread, long fence, long epochMillis,
            boolean accepted) {
        String line = process + " " + kind + " " + thread + " " + fence + " " + epochMillis;
        return (kind == Kind.WRITE) ? line + (accepted ? " ACCEPTED" : " REJECTED") : line;
    }

    /** The events recorded so far, in order. */
    public synchronized List<Event> events() {
        return List.copyOf(this.events);
    }

    /** Checks everything recorded so far, expecting {@code expectedIterations} completed sections. */
    public synchronized Report check(int expectedIterations) {
        List<String> violations = new ArrayList<>();
        Event inside = null;
        Event lastExit = null;
        long lastEnteredFence = 0;
        long highestAcceptedFence = 0;
        int completed = 0;
        long longestGapMillis = -1;
        String longestGapAt = "none";
        for (int i = 0; i < this.events.size(); i++) {
            Event event = this.events.get(i);
            String at = "event " + (i + 1) + " (" + event + ")";
            switch (event.kind()) {
                case ENTER -> {
                    if (inside != null) {
                        violations.add("overlap at " + at + ": " + inside.holder() + " was still inside");
                    }
                    if (event.fence() <= lastEnteredFence) {
                        violations.add("fence did not increase at " + at + ": previous entry had " + lastEnteredFence);
                    }
                    if (lastExit != null && event.atMillis() - lastExit.atMillis() > longestGapMillis) {
                        longestGapMillis = event.atMillis() - lastExit.atMillis();
                        longestGapAt = "before " + at;
                    }
                    inside = event;
                    lastEnteredFence = Math.max(lastEnteredFence, event.fence());
                }
                case EXIT -> {
                    if (inside == null || !inside.holder().equals(event.holder()) || inside.fence() != event.fence()) {
                        violations.add("exit without a matching entry at " + at + ": inside was "
                                + ((inside != null) ? inside.holder() + " with fence " + inside.fence() : "nobody"));
                    }
                    else {
                        completed++;
                    }
                    inside = null;
                    lastExit = event;
                }
                case WRITE -> {
                    if (event.accepted() && (event.fence() <= highestAcceptedFence || event.fence() < lastEnteredFence)) {
                        violations.add("stale write accepted at " + at + ": highest accepted fence "
                                + highestAcceptedFence + ", latest entry fence " + lastEnteredFence);
                    }
                    if (event.accepted()) {
                        highestAcceptedFence = Math.max(highestAcceptedFence, event.fence());
                    }
                }
            }
        }
        if (inside != null) {
            violations.add("entered but never left: " + inside.holder() + " with fence " + inside.fence());
        }
        if (completed != expectedIterations) {
            violations.add("expected " + expectedIterations + " completed critical sections, but recorded " + completed);
        }
        return new Report(completed, longestGapMillis, longestGapAt, violations);
    }

    private long nowMillis() {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - this.originNanos);
    }

    /** What a journal line records. */
    public enum Kind {
        ENTER, EXIT, WRITE
    }

    /**
     * One recorded event.
     * @param atMillis when it happened, in milliseconds on the recording clock
     * @param accepted for a write, whether the resource accepted it; true otherwise
     */
    public record Event(Kind kind, String process, String thread, long fence, long atMillis, boolean accepted) {

        /** @return {@code process/thread} */
        public String holder() {
            return this.process + "/" + this.thread;
        }

        @Override
        public String toString() {
            return journalLine(this.kind, this.process, this.thread, this.fence, this.atMillis, this.accepted);
        }
    }

    /**
     * The outcome of a check.
     * @param completed critical sections entered and left in order
     * @param longestGapMillis longest time from one exit to the next entry, -1 if fewer than two sections
     * @param longestGapAt where that gap ended
     * @param violations every broken guarantee, empty if none
     */
    public record Report(int completed, long longestGapMillis, String longestGapAt, List<String> violations) {

        /** Throws an {@link AssertionError} listing every violation, if there is any. */
        public Report assertNoViolations() {
            if (!this.violations.isEmpty()) {
                List<String> shown = this.violations.subList(0, Math.min(20, this.violations.size()));
                String more = (shown.size() < this.violations.size())
                        ? "\n  ... and " + (this.violations.size() - shown.size()) + " more" : "";
                throw new AssertionError(this.violations.size() + " violation(s) of the lock's guarantees:\n  "
                        + String.join("\n  ", shown) + more);
            }
            return this;
        }
    }
}
