package io.github.distlock.redis;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;

import io.lettuce.core.RedisClient;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * Which servers the registry refuses: those that name a version before 5.0 in {@code INFO server}
 * (no such server is installable here, so their answers are written out, and a socket plays one).
 */
class RedisVersionTests {

    private static final String TOO_OLD =
            "Redis 4.0.14 is too old for the lock registry, which needs Redis 5.0 or later";

    private static String info(String version) {
        return "# Server\r\nredis_version:" + version + "\r\nredis_git_sha1:00000000\r\nredis_mode:standalone\r\n";
    }

    @Test
    void readsTheVersionFromInfoServer() {
        assertThat(RedisVersion.fromInfo(info("7.0.15"))).isEqualTo(new RedisVersion("7.0.15", 7, 0));
        assertThat(RedisVersion.fromInfo(info("6.0.0-rc1"))).isEqualTo(new RedisVersion("6.0.0-rc1", 6, 0));
        assertThat(RedisVersion.fromInfo(info("5.0"))).isEqualTo(new RedisVersion("5.0", 5, 0));
        assertThat(RedisVersion.fromInfo("redis_version:4.0.14\nredis_mode:standalone"))
            .isEqualTo(new RedisVersion("4.0.14", 4, 0));
    }

    @ParameterizedTest
    @ValueSource(strings = { "", "x.y.z", "7", "7.", ".1", "99999999999.0", "7.x" })
    void aVersionThatIsNotMajorDotMinorReadsAsUnknown(String version) {
        assertThat(RedisVersion.fromInfo(info(version))).isNull();
    }

    @Test
    void anAnswerWithoutTheFieldReadsAsUnknown() {
        assertThat(RedisVersion.fromInfo("# Server\r\ndragonfly_version:df-v1.0\r\n")).isNull();
        assertThat(RedisVersion.fromInfo("")).isNull();
    }

    @Test
    void comparesByMajorThenMinor() {
        assertThat(new RedisVersion("5.0.0", 5, 0).isAtLeast(RedisVersion.MINIMUM)).isTrue();
        assertThat(new RedisVersion("10.0.0", 10, 0).isAtLeast(RedisVersion.MINIMUM)).isTrue();
        assertThat(new RedisVersion("4.9.9", 4, 9).isAtLeast(RedisVersion.MINIMUM)).isFalse();
        assertThat(new RedisVersion("6.2.1", 6, 2).isAtLeast(new RedisVersion("6.10", 6, 10))).isFalse();
        assertThat(new RedisVersion("6.10", 6, 10).isAtLeast(new RedisVersion("6.2.1", 6, 2))).isTrue();
    }

    @Test
    void aServerBeforeFiveIsRefusedWithAMessageNamingItsVersionAndTheMinimum() {
        assertThatIllegalStateException().isThrownBy(() -> RedisConnection.checkOldest(List.of(info("4.0.14"))))
            .withMessage(TOO_OLD + ": its scripts read the server's clock (TIME) before they write, which Redis "
                    + "before 5.0 refuses");
    }

    @Test
    void onAClusterTheOldestPrimaryCounts() {
        assertThat(RedisConnection.checkOldest(List.of(info("7.2.4"), info("6.2.14"), info("7.0.0"))))
            .isEqualTo(new RedisVersion("6.2.14", 6, 2));
        assertThatIllegalStateException()
            .isThrownBy(() -> RedisConnection.checkOldest(List.of(info("7.2.4"), info("3.2.12"))))
            .withMessageStartingWith("Redis 3.2.12 is too old");
    }

    @Test
    void serversThatNameNoVersionPass() {
        assertThat(RedisConnection.checkOldest(List.of("# Server\r\n"))).isNull();
        assertThat(RedisConnection.checkOldest(List.of("# Server\r\n", info("5.0.7"))))
            .isEqualTo(new RedisVersion("5.0.7", 5, 0));
    }

    /** What a caller sees: connecting, and every call after it, fail with the versions in the message. */
    @Test
    void aRegistryOnRedisFourFailsNamingBothVersions() throws Exception {
        try (OldRedis old = new OldRedis("4.0.14")) {
            RedisClient client = RedisClient.create("redis://127.0.0.1:" + old.port());
            // A long request timeout: a first connection in a JVM on a loaded machine took 14 s.
            try (RedisLockRegistry registry = RedisLockRegistry.builder(client).description("Redis at old:6379")
                .requestTimeout(Duration.ofSeconds(30)).build()) {
                assertThat(registry.connect()).failsWithin(Duration.ofSeconds(60))
                    .withThrowableOfType(ExecutionException.class)
                    .withMessageContaining("Could not connect to Redis at old:6379")
                    .withMessageContaining(TOO_OLD);
                // Every later call tries to connect again, and fails the same way.
                assertThatIllegalStateException().isThrownBy(() -> registry.describeLock("k", 1))
                    .withMessageContaining("Could not read lock 'k' from Redis at old:6379")
                    .withMessageContaining(TOO_OLD);
            }
            finally {
                client.shutdown();
            }
        }
    }

    /**
     * Answers as Redis 4 did: refuses {@code HELLO} (so that Lettuce speaks RESP2) and every command
     * but {@code PING} and {@code INFO}, which names the version.
     */
    private static final class OldRedis implements AutoCloseable {

        private final ServerSocket server;

        private final String version;

        OldRedis(String version) throws IOException {
            this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
            this.version = version;
            daemon(this::accept, "old-redis-accept").start();
        }

        int port() {
            return this.server.getLocalPort();
        }

        private void accept() {
            while (!this.server.isClosed()) {
                try {
                    Socket socket = this.server.accept();
                    daemon(() -> serve(socket), "old-redis-" + socket.getPort()).start();
                }
                catch (IOException ex) {
                    return;
                }
            }
        }

        private void serve(Socket socket) {
            try (socket; InputStream in = new BufferedInputStream(socket.getInputStream());
                    OutputStream out = socket.getOutputStream()) {
                while (true) {
                    List<String> command = readCommand(in);
                    String reply = switch (command.get(0).toUpperCase()) {
                        case "PING" -> "+PONG\r\n";
                        case "INFO" -> bulk("# Server\r\nredis_version:" + this.version
                                + "\r\nredis_mode:standalone\r\n");
                        default -> "-ERR unknown command '" + command.get(0) + "'\r\n";
                    };
                    out.write(reply.getBytes(StandardCharsets.UTF_8));
                    out.flush();
                }
            }
            catch (IOException ex) {
                // The client went away.
            }
        }

        /** Reads one command: an array of bulk strings, as clients send them. */
        private static List<String> readCommand(InputStream in) throws IOException {
            int count = Integer.parseInt(readLine(in).substring(1));
            List<String> command = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                int length = Integer.parseInt(readLine(in).substring(1));
                byte[] bytes = in.readNBytes(length + 2);
                command.add(new String(bytes, 0, length, StandardCharsets.UTF_8));
            }
            return command;
        }

        private static String readLine(InputStream in) throws IOException {
            StringBuilder line = new StringBuilder();
            int c;
            while ((c = in.read()) != '\n') {
                if (c == -1) {
                    throw new IOException("closed");
                }
                if (c != '\r') {
                    line.append((char) c);
                }
            }
            return line.toString();
        }

        private static String bulk(String text) {
            return "$" + text.getBytes(StandardCharsets.UTF_8).length + "\r\n" + text + "\r\n";
        }

        private static Thread daemon(Runnable task, String name) {
            Thread thread = new Thread(task, name);
            thread.setDaemon(true);
            return thread;
        }

        @Override
        public void close() throws IOException {
            this.server.close();
        }
    }
}
