package io.github.distlock.testsupport;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.Properties;
import java.util.stream.Stream;

/**
 * A private PostgreSQL server for the tests (see {@link DatabaseServer}): {@code initdb} creates a
 * cluster in a temporary directory with the superuser {@code distlock} and password
 * authentication, and {@code postgres} serves it on a free loopback port, its Unix socket in the
 * same directory, never the system's. The JDBC URL names the {@code postgres} database.
 * <p>
 * The binaries are those in {@code $POSTGRES_BIN_DIR}, else in the newest
 * {@code /usr/lib/postgresql/<version>/bin} (where Debian's {@code postgresql} puts them;
 * {@code scripts/test.sh} installs it when missing), else on the {@code PATH}.
 */
public final class PostgresServer extends DatabaseServer {

    private static final String BIN_DIR_VARIABLE = "POSTGRES_BIN_DIR";

    private static final Path DEBIAN_VERSIONS = Path.of("/usr/lib/postgresql");

    private static final String USER = "distlock";

    private final Path binaries;

    private PostgresServer(Path binaries) {
        super("postgres");
        this.binaries = binaries;
    }

    /**
     * Creates a cluster, starts the server and waits until it accepts connections.
     * @return the running server
     */
    public static PostgresServer start() {
        return start(false);
    }

    /**
     * @param steppableClock whether {@link #stepClock} may step the server's wall clock (libfaketime)
     * @return the running server
     */
    public static PostgresServer start(boolean steppableClock) {
        return start(new PostgresServer(locateBinaries()), steppableClock);
    }

    @Override
    public String jdbcUrl() {
        return "jdbc:postgresql://" + host() + ":" + port() + "/postgres";
    }

    @Override
    public String username() {
        return USER;
    }

    /**
     * Freezes the server's background processes that write (SIGSTOP) until the next {@link #kill()}:
     * the WAL writer, the background writer, the checkpointer and the autovacuum launcher. A
     * transaction that commits without waiting for its flush then stays in memory only, until a
     * synchronous commit flushes it or a crash loses it.
     * @throws SQLException if the server does not answer which processes those are
     */
    public void pauseBackgroundWriters() throws SQLException {
        List<Long> pids = new ArrayList<>();
        try (Connection connection = connect(); Statement statement = connection.createStatement();
                ResultSet rows = statement.executeQuery("SELECT pid FROM pg_stat_activity WHERE backend_type IN "
                        + "('walwriter', 'background writer', 'checkpointer', 'autovacuum launcher')")) {
            while (rows.next()) {
                pids.add(rows.getLong(1));
            }
        }
        if (pids.size() < 3) {
            throw new IllegalStateException(description() + " shows only " + pids.size()
                    + " of its background writers");
        }
        for (long pid : pids) {
            ProcessSupport.signal(pid, "STOP");
            ProcessSupport.awaitStopped(pid, true, EXIT_TIMEOUT);
        }
    }

    @Override
    protected String productName() {
        return "PostgreSQL";
    }

    @Override
    protected void initialize() {
        Path passwordFile = directory().resolve("password");
        writePrivateFile(passwordFile, password() + "\n");
        runAsServerUser(List.of(this.binaries.resolve("initdb").toString(), "--pgdata=" + dataDirectory(),
                "--username=" + USER, "--pwfile=" + passwordFile, "--auth=scram-sha-256", "--encoding=UTF8",
                "--no-locale", "--no-sync"), directory().resolve("initdb.log"));
        try {
            Files.delete(passwordFile);
        }
        catch (IOException ex) {
            throw new UncheckedIOException("Could not delete " + passwordFile, ex);
        }
    }

    @Override
    protected List<String> serverCommand() {
        return List.of(this.binaries.resolve("postgres").toString(), "-D", dataDirectory().toString(),
                "-k", directory().toString(), "-p", Integer.toString(port()),
                "-c", "listen_addresses=" + host(), "-c", "logging_collector=off");
    }

    @Override
    protected Path logFile() {
        // postgres logs to its standard error.
        return standardOutput();
    }

    @Override
    protected Properties timeoutProperties(Duration connectTimeout, Duration readTimeout) {
        Properties properties = new Properties();
        properties.setProperty("connectTimeout", Long.toString(seconds(connectTimeout)));
        properties.setProperty("loginTimeout", Long.toString(seconds(connectTimeout)));
        properties.setProperty("socketTimeout", Long.toString(seconds(readTimeout)));
        return properties;
    }

    /** The driver counts in whole seconds, where 0 means no bound. */
    private static long seconds(Duration duration) {
        return Math.max(1, (duration.toMillis() + 999) / 1000);
    }

    @Override
    protected Path dataDirectory() {
        return directory().resolve("data");
    }

    /** @return the directory that holds both {@code initdb} and {@code postgres} */
    static Path locateBinaries() {
        String configured = System.getenv(BIN_DIR_VARIABLE);
        if (configured != null && !configured.isBlank()) {
            Path directory = Path.of(configured);
            if (!hasServerBinaries(directory)) {
                throw new IllegalStateException(BIN_DIR_VARIABLE + "=" + configured + " holds no executable initdb and "
                        + "postgres. Point it to PostgreSQL's bin directory, or unset it after "
                        + "'apt-get install -y postgresql'.");
            }
            return directory;
        }
        List<Path> candidates = new ArrayList<>(debianVersionDirectories());
        for (String directory : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            if (!directory.isBlank()) {
                candidates.add(Path.of(directory));
            }
        }
        Optional<Path> found = candidates.stream().filter(PostgresServer::hasServerBinaries).findFirst();
        return found.orElseThrow(() -> new IllegalStateException("No PostgreSQL server binaries (initdb and postgres) "
                + "found (looked at $" + BIN_DIR_VARIABLE + ", " + DEBIAN_VERSIONS + "/<version>/bin and the PATH). "
                + "Install them with 'apt-get install -y postgresql' (Debian/Ubuntu; scripts/test.sh does), or set "
                + BIN_DIR_VARIABLE + " to the directory that holds them."));
    }

    /** @return {@code /usr/lib/postgresql/<version>/bin}, newest version first */
    private static List<Path> debianVersionDirectories() {
        if (!Files.isDirectory(DEBIAN_VERSIONS)) {
            return List.of();
        }
        try (Stream<Path> versions = Files.list(DEBIAN_VERSIONS)) {
            return versions.filter(version -> version.getFileName().toString().matches("\\d+(\\.\\d+)?"))
                .sorted(Comparator.comparingDouble((Path version) -> Double.parseDouble(version.getFileName().toString()))
                    .reversed())
                .map(version -> version.resolve("bin"))
                .toList();
        }
        catch (IOException ex) {
            throw new UncheckedIOException("Could not list " + DEBIAN_VERSIONS, ex);
        }
    }

    private static boolean hasServerBinaries(Path directory) {
        return Files.isExecutable(directory.resolve("initdb")) && Files.isExecutable(directory.resolve("postgres"));
    }
}
