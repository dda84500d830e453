package io.github.distlock.autoconfigure;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.github.distlock.testsupport.EtcdCluster;
import io.github.distlock.testsupport.ProcessSupport;
import org.springframework.util.FileSystemUtils;

import static org.awaitility.Awaitility.await;

/**
 * A one-member etcd, found as the other tests find it ({@link EtcdCluster#locateEtcdBinary()}), that serves clients
 * only over TLS and requires a client certificate issued by the test CA (see {@link TlsFiles}).
 */
final class TlsEtcdServer implements AutoCloseable {

    private static final Duration START_TIMEOUT = Duration.ofSeconds(30);

    private final Path directory;

    private final Path log;

    private final Process process;

    private final String endpoint;

    private TlsEtcdServer(Path tls) throws IOException {
        this.directory = Files.createTempDirectory("distlock-tls-etcd-");
        this.log = this.directory.resolve("etcd.log");
        int[] ports = ProcessSupport.freeLoopbackPorts(2);
        int clientPort = ports[0];
        int peerPort = ports[1];
        this.endpoint = "https://127.0.0.1:" + clientPort;
        String peer = "http://127.0.0.1:" + peerPort;
        List<String> command = List.of(EtcdCluster.locateEtcdBinary().toString(), "--name", "tls", "--data-dir",
                this.directory.resolve("data").toString(), "--listen-client-urls", this.endpoint,
                "--advertise-client-urls", this.endpoint, "--listen-peer-urls", peer, "--initial-advertise-peer-urls",
                peer, "--initial-cluster", "tls=" + peer, "--cert-file", tls.resolve("server.pem").toString(),
                "--key-file", tls.resolve("server.key").toString(), "--client-cert-auth", "--trusted-ca-file",
                tls.resolve("ca.pem").toString(), "--logger", "zap", "--log-outputs", "stderr");
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(this.log.toFile());
        // etcd reads ETCD_* variables as flags; the test environment's must not configure the server.
        builder.environment().keySet().removeIf(variable -> variable.startsWith("ETCD_"));
        this.process = builder.start();
    }

    /** Starts the server and waits until it serves clients. */
    static TlsEtcdServer start() {
        TlsEtcdServer server;
        try {
            server = new TlsEtcdServer(TlsFiles.directory());
        }
        catch (IOException ex) {
            throw new UncheckedIOException("Could not start etcd with TLS", ex);
        }
        try {
            await().atMost(START_TIMEOUT)
                .pollInterval(Duration.ofMillis(50))
                .until(() -> !server.process.isAlive() || server.logContains("serving client traffic securely"));
            if (!server.process.isAlive()) {
                throw new IllegalStateException("etcd with TLS exited at start-up:\n" + server.logText());
            }
            return server;
        }
        catch (RuntimeException ex) {
            server.close();
            throw ex;
        }
    }

    /** @return the https:// URL clients connect to */
    String endpoint() {
        return this.endpoint;
    }

    @Override
    public void close() {
        this.process.destroyForcibly();
        try {
            this.process.waitFor(15, TimeUnit.SECONDS);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
        try {
            FileSystemUtils.deleteRecursively(this.directory);
        }
        catch (IOException ex) {
            throw new UncheckedIOException("Could not delete " + this.directory, ex);
        }
    }

    private boolean logContains(String text) {
        return logText().contains(text);
    }

    private String logText() {
        try {
            return Files.exists(this.log) ? Files.readString(this.log) : "";
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }
}
