package io.github.distlock.nemesis;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * Reads the history files of a run (one per process, as {@link HistoryWriter} writes them) and
 * merges them into one list ordered by {@link HistoryEvent#at()}; events with the same time keep
 * their file's order.
 *
 * <p>A file that does not end with a newline was cut while its last line was being written (the
 * process was killed mid-write, or the disk filled): that torn line is dropped and counted, never
 * guessed at, since a prefix of a line can parse as a different event (a fence cut from 4096 to
 * 40). Any other line that does not parse fails the read, naming the file and line: a corrupt
 * history cannot be checked.
 */
public final class HistoryReader {

    private HistoryReader() {
    }

    /** @return the events of every {@code *.history} file in {@code directory} */
    public static Recording readDirectory(Path directory) throws IOException {
        try (Stream<Path> files = Files.list(directory)) {
            return read(files.filter((file) -> file.getFileName().toString().endsWith(".history")).sorted().toList());
        }
    }

    /** @return the events of {@code files}, merged */
    public static Recording read(Collection<Path> files) throws IOException {
        List<HistoryEvent> events = new ArrayList<>();
        int tornLines = 0;
        for (Path file : files) {
            String content = Files.readString(file, StandardCharsets.UTF_8);
            int lineStart = 0;
            int lineNumber = 0;
            while (lineStart < content.length()) {
                int newline = content.indexOf('\n', lineStart);
                if (newline < 0) {
                    tornLines++;
                    break;
                }
                lineNumber++;
                String line = content.substring(lineStart, newline);
                try {
                    events.add(HistoryLines.parse(line));
                }
                catch (RuntimeException ex) {
                    throw new IllegalArgumentException(file + " line " + lineNumber + ": " + ex.getMessage(), ex);
                }
                lineStart = newline + 1;
            }
        }
        // List.sort is stable, so events of one time keep their file order.
        events.sort(Comparator.comparingLong(HistoryEvent::at));
        return new Recording(List.copyOf(events), tornLines);
    }

    /**
     * The merged events of a run.
     * @param events every whole line's event, ordered by time
     * @param tornLines last lines dropped because their process was cut while writing them
     */
    public record Recording(List<HistoryEvent> events, int tornLines) {
    }
}
