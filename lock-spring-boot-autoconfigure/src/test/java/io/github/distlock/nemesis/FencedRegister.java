package io.github.distlock.nemesis;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The resource that the nemesis workers' holds write to: one fenced register per lock key, kept
 * in the runner's JVM, outside the lock store, so that no fault of the store touches it.
 *
 * <p>A register accepts a write whose fence is at least the highest fence it accepted before (a
 * reentrant hold and a hold that writes twice use one fence) and rejects a lower one, answering
 * with that highest fence either way. The protocol is one line each way over loopback TCP:
 * {@code WRITE <key> <fence>}, answered {@code ACCEPTED <last>} or {@code REJECTED <last>}, where
 * {@code <last>} is the highest fence accepted before this write (0 for none). Keys must not
 * contain whitespace.
 */
public final class FencedRegister implements AutoCloseable {

    private final ServerSocket server;

    private final Map<String, Long> accepted = new HashMap<>();

    private final Set<Socket> connections = ConcurrentHashMap.newKeySet();

    private final Thread acceptor;

    private volatile boolean closed;

    private FencedRegister(ServerSocket server) {
        this.server = server;
        this.acceptor = new Thread(this::accept, "fenced-register");
        this.acceptor.setDaemon(true);
        this.acceptor.start();
    }

    /** @return a register listening on a free loopback port */
    public static FencedRegister start() {
        try {
            ServerSocket server = new ServerSocket();
            server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            return new FencedRegister(server);
        }
        catch (IOException ex) {
            throw new UncheckedIOException("Could not open the fenced register", ex);
        }
    }

    /** @return {@code host:port} to hand to the workers */
    public String address() {
        return this.server.getInetAddress().getHostAddress() + ":" + this.server.getLocalPort();
    }

    /**
     * @return the answer to a write of {@code fence} to the register of {@code key}
     */
    public synchronized Answer write(String key, long fence) {
        long last = this.accepted.getOrDefault(key, 0L);
        boolean accept = fence >= last;
        if (accept) {
            this.accepted.put(key, fence);
        }
        return new Answer(accept, last);
    }

    private void accept() {
        while (!this.closed) {
            try {
                Socket socket = this.server.accept();
                this.connections.add(socket);
                Thread serve = new Thread(() -> serve(socket), "fenced-register-" + socket.getPort());
                serve.setDaemon(true);
                serve.start();
            }
            catch (IOException ex) {
                if (!this.closed) {
                    System.err.println("fenced register: accept failed: " + ex);
                }
            }
        }
    }

    private void serve(Socket socket) {
        try (socket;
                BufferedReader in = new BufferedReader(
                        new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
                Writer out = new OutputStreamWriter(socket.getOutputStream(), StandardCharsets.UTF_8)) {
            socket.setTcpNoDelay(true);
            String line;
            while ((line = in.readLine()) != null) {
                String[] words = line.split(" ");
                if (words.length != 3 || !words[0].equals("WRITE")) {
                    out.write("ERROR bad request '" + line + "'\n");
                }
                else {
                    Answer answer = write(words[1], Long.parseLong(words[2]));
                    out.write((answer.accepted() ? "ACCEPTED " : "REJECTED ") + answer.lastAccepted() + "\n");
                }
                out.flush();
            }
        }
        catch (IOException | RuntimeException ex) {
            // A worker killed with SIGKILL resets its connections: nothing to answer any more.
        }
        finally {
            this.connections.remove(socket);
        }
    }

    @Override
    public void close() {
        this.closed = true;
        try {
            this.server.close();
        }
        catch (IOException ex) {
            // Closing a listening socket only fails if it is closed already.
        }
        for (Socket socket : this.connections) {
            try {
                socket.close();
            }
            catch (IOException ex) {
                // Same: the connection is gone.
            }
        }
    }

    /**
     * A register's answer.
     * @param accepted whether the write was taken
     * @param lastAccepted the highest fence accepted before it, 0 for none
     */
    public record Answer(boolean accepted, long lastAccepted) {
    }

    /** One worker thread's connection to the register; not thread-safe. */
    static final class Client implements AutoCloseable {

        private final Socket socket;

        private final BufferedReader in;

        private final Writer out;

        private Client(Socket socket) throws IOException {
            this.socket = socket;
            socket.setTcpNoDelay(true);
            this.in = new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
            this.out = new OutputStreamWriter(socket.getOutputStream(), StandardCharsets.UTF_8);
        }

        /** @param address {@code host:port}, as {@link FencedRegister#address()} gives it */
        static Client connect(String address) throws IOException {
            int colon = address.lastIndexOf(':');
            return new Client(new Socket(address.substring(0, colon), Integer.parseInt(address.substring(colon + 1))));
        }

        Answer write(String key, long fence) throws IOException {
            this.out.write("WRITE " + key + " " + fence + "\n");
            this.out.flush();
            String line = this.in.readLine();
            if (line == null) {
                throw new IOException("the register closed the connection");
            }
            String[] words = line.split(" ");
            if (words.length != 2 || !(words[0].equals("ACCEPTED") || words[0].equals("REJECTED"))) {
                throw new IOException("unexpected answer from the register: " + line);
            }
            return new Answer(words[0].equals("ACCEPTED"), Long.parseLong(words[1]));
        }

        @Override
        public void close() throws IOException {
            this.socket.close();
        }
    }
}
