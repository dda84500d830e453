package io.github.distlock.sample.demo;

import java.time.LocalTime;
import java.time.format.DateTimeFormatter;
import java.util.Locale;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One line of a demo worker's output, such as
 * {@code 10:15:30.123 p2 worker 3 acquired (fence 1234)}.
 *
 * @param time when it happened (wall clock, millisecond precision)
 * @param process the worker process, from 1
 * @param worker the worker, numbered across all processes from 1
 * @param kind what happened
 * @param fence the fence of the acquisition, for {@link Kind#ACQUIRED}; otherwise 0
 */
public record DemoEvent(LocalTime time, int process, int worker, Kind kind, long fence) {

    private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("HH:mm:ss.SSS");

    private static final Pattern LINE = Pattern
        .compile("(\\d{2}:\\d{2}:\\d{2}\\.\\d{3}) p(\\d+) worker (\\d+) (waiting|acquired|released)(?: \\(fence (\\d+)\\))?");

    /** @return the event a line describes, or empty if the line is not an event */
    public static Optional<DemoEvent> parse(String line) {
        Matcher matcher = LINE.matcher(line.strip());
        if (!matcher.matches()) {
            return Optional.empty();
        }
        return Optional.of(new DemoEvent(LocalTime.parse(matcher.group(1), TIME), Integer.parseInt(matcher.group(2)),
                Integer.parseInt(matcher.group(3)), Kind.valueOf(matcher.group(4).toUpperCase(Locale.ROOT)),
                (matcher.group(5) != null) ? Long.parseLong(matcher.group(5)) : 0));
    }

    /** @return the event as a line, as {@link #parse} reads it */
    public String format() {
        String line = TIME.format(this.time) + " p" + this.process + " worker " + this.worker + " "
                + this.kind.name().toLowerCase(Locale.ROOT);
        return (this.kind == Kind.ACQUIRED) ? line + " (fence " + this.fence + ")" : line;
    }

    /** What a worker did. */
    public enum Kind {

        /** Started waiting for the lock: its arrival. */
        WAITING,

        /** Got the lock. */
        ACQUIRED,

        /** Is about to release the lock. */
        RELEASED
    }
}
