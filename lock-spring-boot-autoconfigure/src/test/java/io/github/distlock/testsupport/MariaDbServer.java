package io.github.distlock.testsupport;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Properties;

/**
 * A private MariaDB server for the tests (see {@link DatabaseServer}): {@code mariadb-install-db}
 * creates the system tables in a temporary directory, and {@code mariadbd} serves them on a free
 * loopback port, its Unix socket in the same directory, never the system's, reading no option file
 * ({@code --no-defaults}). At every start an init file creates, if missing, the database
 * {@code distlock} and the user {@code distlock}@{@code 127.0.0.1} with all privileges and the
 * server's password; the JDBC URL names that database.
 * <p>
 * The binaries are {@code $MARIADBD_BIN} and {@code $MARIADB_INSTALL_DB_BIN}, else
 * {@code mariadbd} and {@code mariadb-install-db} in {@code /usr/bin}, {@code /usr/sbin} (where
 * Debian's {@code mariadb-server} puts {@code mariadbd}; {@code scripts/test.sh} installs it when
 * missing) or on the {@code PATH}.
 */
public final class MariaDbServer extends DatabaseServer {

    private static final String USER = "distlock";

    private static final String DATABASE = "distlock";

    private final Path server;

    private final Path installDb;

    private MariaDbServer(Path server, Path installDb) {
        super("mariadb");
        this.server = server;
        this.installDb = installDb;
    }

    /**
     * Creates the data directory, starts the server and waits until it accepts connections.
     * @return the running server
     */
    public static MariaDbServer start() {
        return start(false);
    }

    /**
     * @param steppableClock whether {@link #stepClock} may step the server's wall clock (libfaketime)
     * @return the running server
     */
    public static MariaDbServer start(boolean steppableClock) {
        Path sbin = Path.of("/usr/sbin");
        return start(new MariaDbServer(ProcessSupport.locateBinary("MARIADBD_BIN", "mariadbd", "mariadb-server", sbin),
                ProcessSupport.locateBinary("MARIADB_INSTALL_DB_BIN", "mariadb-install-db", "mariadb-server", sbin)),
                steppableClock);
    }

    @Override
    public String jdbcUrl() {
        return "jdbc:mariadb://" + host() + ":" + port() + "/" + DATABASE;
    }

    @Override
    public String username() {
        return USER;
    }

    @Override
    protected String productName() {
        return "MariaDB";
    }

    @Override
    protected void initialize() {
        // Its own temporary directory, for the server and for the bootstrap server of mariadb-install-db alike:
        // at start-up a server deletes every "#sql*" file in it, which in the shared /tmp are the temporary
        // tables of other servers (a bootstrap of another test JVM failed with "Error on delete of
        // '/tmp/#sql-temptable-...'").
        createServerDirectory(temporaryDirectory());
        // Root may log in only through the Unix socket, as the OS user that owns the directory. Options that
        // mariadb-install-db does not know, such as --tmpdir, go to its bootstrap server.
        runAsServerUser(List.of(this.installDb.toString(), "--no-defaults", "--datadir=" + dataDirectory(),
                "--tmpdir=" + temporaryDirectory(), "--auth-root-authentication-method=socket", "--skip-test-db"),
                directory().resolve("install-db.log"));
        // The password is a hex string: no quoting issues.
        writePrivateFile(initFile(), String.join("\n",
                "CREATE DATABASE IF NOT EXISTS " + DATABASE + ";",
                "CREATE USER IF NOT EXISTS '" + USER + "'@'127.0.0.1' IDENTIFIED BY '" + password() + "';",
                "GRANT ALL PRIVILEGES ON *.* TO '" + USER + "'@'127.0.0.1';", ""));
    }

    @Override
    protected List<String> serverCommand() {
        // --no-defaults must come first.
        return List.of(this.server.toString(), "--no-defaults", "--datadir=" + dataDirectory(),
                "--socket=" + directory().resolve("mariadbd.sock"), "--port=" + port(), "--bind-address=" + host(),
                "--tmpdir=" + temporaryDirectory(), "--skip-name-resolve",
                "--pid-file=" + directory().resolve("mariadbd.pid"),
                "--log-error=" + logFile(), "--init-file=" + initFile());
    }

    @Override
    protected Path logFile() {
        return directory().resolve("error.log");
    }

    @Override
    protected Properties timeoutProperties(Duration connectTimeout, Duration readTimeout) {
        Properties properties = new Properties();
        properties.setProperty("connectTimeout", Long.toString(connectTimeout.toMillis()));
        properties.setProperty("socketTimeout", Long.toString(readTimeout.toMillis()));
        return properties;
    }

    @Override
    protected Path dataDirectory() {
        return directory().resolve("data");
    }

    private Path temporaryDirectory() {
        return directory().resolve("tmp");
    }

    private Path initFile() {
        return directory().resolve("init.sql");
    }
}
