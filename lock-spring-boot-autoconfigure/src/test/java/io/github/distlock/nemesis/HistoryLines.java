package io.github.distlock.nemesis;

import java.util.HashMap;
import java.util.Map;

import io.github.distlock.nemesis.HistoryEvent.Call;
import io.github.distlock.nemesis.HistoryEvent.Failure;
import io.github.distlock.nemesis.HistoryEvent.FaultKind;
import io.github.distlock.nemesis.HistoryEvent.FaultHeal;
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

/**
 * The line format of a history: tab-separated {@code name=value} fields, first {@code at},
 * {@code ev} (the event's {@link HistoryEvent#type()}) and {@code proc}, then the event's own
 * fields, for example {@code at=81234567890123 ev=grant proc=w1 op=w1:17 fence=4096} (tabs shown
 * as spaces). Values escape backslash, tab, newline and carriage return with a backslash
 * ({@code \\ \t \n \r}), and a lone surrogate, which UTF-8 cannot carry, as a backslash, {@code u}
 * and four hex digits; so any lock key fits on one line. A value may contain {@code =}, since a
 * field splits at its first one. Readable with {@code grep} and {@code cut}, and needs no library.
 */
public final class HistoryLines {

    private HistoryLines() {
    }

    /** @return the line of {@code event}, without a line terminator */
    public static String format(HistoryEvent event) {
        StringBuilder line = new StringBuilder(96);
        line.append("at=").append(event.at()).append("\tev=").append(event.type()).append("\tproc=");
        escape(event.process(), line);
        event.fields().forEach((name, value) -> {
            line.append('\t').append(name).append('=');
            escape(String.valueOf(value), line);
        });
        return line.toString();
    }

    /**
     * @param line a line as {@link #format} writes it, without its terminator
     * @return its event
     * @throws IllegalArgumentException if it is not such a line
     */
    public static HistoryEvent parse(String line) {
        Fields f = Fields.split(line);
        long at = f.number("at");
        String process = f.text("proc");
        String type = f.text("ev");
        return switch (type) {
            case "run" -> new RunStart(at, process, f.number("seed"), f.text("store"), f.number("epochMillis"));
            case "request" -> new Request(at, process, f.text("thread"), f.text("op"), f.text("key"), f.flag("fair"),
                    f.choice("call", Call.class), f.number("timeoutMs"));
            case "grant" -> new Grant(at, process, f.text("op"), f.number("fence"));
            case "refusal" -> new Refusal(at, process, f.text("op"), f.choice("failure", Failure.class),
                    f.text("detail"));
            case "unlocking" -> new Unlocking(at, process, f.text("op"));
            case "release" -> new Release(at, process, f.text("op"), f.flag("lost"),
                    f.has("answered") ? f.number("answered") : at);
            case "write" -> new RegisterWrite(at, process, f.text("op"), f.text("key"), f.number("fence"),
                    f.flag("accepted"), f.number("lastAccepted"));
            case "loss" -> new LossReport(at, process, f.text("key"), f.number("firstFence"), f.number("lastFence"),
                    Math.toIntExact(f.number("count")), f.text("reason"));
            case "fault" -> new FaultStart(at, process, f.text("fault"), f.choice("kind", FaultKind.class),
                    f.text("target"), f.flag("dataLoss"));
            case "heal" -> new FaultHeal(at, process, f.text("fault"));
            case "killed" -> new WorkerKilled(at, process, f.text("worker"));
            case "observed" -> new StoreObservation(at, process, Math.toIntExact(f.number("entries")),
                    Math.toIntExact(f.number("sessions")), f.text("detail"));
            default -> throw new IllegalArgumentException("unknown event '" + type + "'");
        };
    }

    private static void escape(String value, StringBuilder to) {
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            switch (c) {
                case '\\' -> to.append("\\\\");
                case '\t' -> to.append("\\t");
                case '\n' -> to.append("\\n");
                case '\r' -> to.append("\\r");
                default -> {
                    if (Character.isSurrogate(c) && !isPaired(value, i)) {
                        to.append(String.format("\\u%04x", (int) c));
                    }
                    else {
                        to.append(c);
                    }
                }
            }
        }
    }

    /** @return whether the surrogate at {@code index} is half of a pair, which UTF-8 carries as one code point */
    private static boolean isPaired(String value, int index) {
        if (Character.isHighSurrogate(value.charAt(index))) {
            return index + 1 < value.length() && Character.isLowSurrogate(value.charAt(index + 1));
        }
        return index > 0 && Character.isHighSurrogate(value.charAt(index - 1));
    }

    private static String unescape(String value) {
        if (value.indexOf('\\') < 0) {
            return value;
        }
        StringBuilder text = new StringBuilder(value.length());
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c != '\\') {
                text.append(c);
                continue;
            }
            if (++i == value.length()) {
                throw new IllegalArgumentException("value ends inside an escape: '" + value + "'");
            }
            text.append(switch (value.charAt(i)) {
                case '\\' -> '\\';
                case 't' -> '\t';
                case 'n' -> '\n';
                case 'r' -> '\r';
                case 'u' -> {
                    if (i + 5 > value.length()) {
                        throw new IllegalArgumentException("value ends inside an escape: '" + value + "'");
                    }
                    char escaped = (char) Integer.parseInt(value.substring(i + 1, i + 5), 16);
                    i += 4;
                    yield escaped;
                }
                default -> throw new IllegalArgumentException("unknown escape in '" + value + "'");
            });
        }
        return text.toString();
    }

    /** The fields of one line, by name, with typed reads that name the missing or malformed field. */
    private record Fields(Map<String, String> values) {

        static Fields split(String line) {
            Map<String, String> values = new HashMap<>();
            for (String field : line.split("\t", -1)) {
                int equals = field.indexOf('=');
                if (equals <= 0) {
                    throw new IllegalArgumentException("field without a name: '" + field + "'");
                }
                if (values.put(field.substring(0, equals), unescape(field.substring(equals + 1))) != null) {
                    throw new IllegalArgumentException("field '" + field.substring(0, equals) + "' twice");
                }
            }
            return new Fields(values);
        }

        String text(String name) {
            String value = this.values.get(name);
            if (value == null) {
                throw new IllegalArgumentException("no field '" + name + "'");
            }
            return value;
        }

        boolean has(String name) {
            return this.values.containsKey(name);
        }

        long number(String name) {
            try {
                return Long.parseLong(text(name));
            }
            catch (NumberFormatException ex) {
                throw new IllegalArgumentException("field '" + name + "' is not a number: '" + text(name) + "'", ex);
            }
        }

        boolean flag(String name) {
            return switch (text(name)) {
                case "true" -> true;
                case "false" -> false;
                default -> throw new IllegalArgumentException("field '" + name + "' is not true or false");
            };
        }

        <E extends Enum<E>> E choice(String name, Class<E> type) {
            try {
                return Enum.valueOf(type, text(name));
            }
            catch (IllegalArgumentException ex) {
                throw new IllegalArgumentException("field '" + name + "' is not a " + type.getSimpleName() + ": '"
                        + text(name) + "'", ex);
            }
        }
    }
}
