package io.github.distlock.nemesis;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Appends the events of one process to its own history file, from any number of threads.
 *
 * <p>Each event is formatted in memory and handed to the kernel as one whole line, in one
 * {@code write} to a file opened with {@code O_APPEND}, before {@link #record} returns. The
 * kernel's page cache is the buffer: it survives the JVM's SIGKILL, so a killed worker loses no
 * event it recorded, and at worst the one line it was writing when the signal came is torn (a
 * last line without its newline, which {@link HistoryReader} drops). A buffer in the JVM would
 * save about a microsecond per event, next to milliseconds per lock operation, and would lose
 * exactly the events around a kill that the checker needs. A failed write throws: a worker whose
 * history has a gap must stop, since the checker would read the gap as a hang or a silent loss.
 */
public final class HistoryWriter implements AutoCloseable {

    private final Path file;

    private final FileChannel channel;

    private HistoryWriter(Path file, FileChannel channel) {
        this.file = file;
        this.channel = channel;
    }

    /**
     * @param file the process's own history file, created if missing, appended to otherwise
     * @return a writer that appends to it
     */
    public static HistoryWriter open(Path file) throws IOException {
        return new HistoryWriter(file, FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.APPEND));
    }

    /** Appends {@code event} as one line; thread-safe, the line is in the file when this returns. */
    public void record(HistoryEvent event) {
        ByteBuffer line = ByteBuffer.wrap((HistoryLines.format(event) + "\n").getBytes(StandardCharsets.UTF_8));
        synchronized (this) {
            try {
                while (line.hasRemaining()) {
                    this.channel.write(line);
                }
            }
            catch (IOException ex) {
                throw new UncheckedIOException("could not record in " + this.file + ": " + event, ex);
            }
        }
    }

    @Override
    public synchronized void close() throws IOException {
        this.channel.close();
    }
}
