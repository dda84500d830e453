package io.github.distlock.testsupport;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.net.URI;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A TCP proxy on a free loopback port in front of one etcd member (or any TCP server), that plays
 * the network between a client and etcd: it forwards bytes, or {@link #reset() resets} every connection and refuses new
 * ones, or {@link #stall() stalls} them (connections stay open, no byte gets through, as in a
 * partition where packets are dropped), until {@link #restore()}; or it {@link #severOpenConnections()
 * severs} the open connections for good without telling either end, as a NAT or firewall that
 * forgot them does.
 *
 * <p>Each connection uses two daemon threads, one per direction. A stalled connection's bytes are
 * held, not dropped, and delivered after {@link #restore()}, as TCP would retransmit them.
 */
public final class TcpProxy implements AutoCloseable {

    private enum Mode {
        FORWARD, RESET, STALL
    }

    private final ServerSocket server;

    private final InetSocketAddress target;

    private final Set<Socket> sockets = ConcurrentHashMap.newKeySet();

    private final Object modeChanged = new Object();

    private volatile Mode mode = Mode.FORWARD;

    /** Added to every chunk of bytes in each direction, as a slow network path would. */
    private volatile long latencyNanos;

    private volatile boolean closed;

    /** Set while the server's bytes are held (as {@link Mode#STALL} holds both directions) and the client's forwarded. */
    private volatile boolean stallingAnswers;

    /** Set while new connections are refused (accepted, then reset) and open ones still forwarded. */
    private volatile boolean refusingNew;

    /** Numbers the connections in the order they were accepted. */
    private final AtomicLong accepted = new AtomicLong();

    /** Connections numbered below this are severed: their bytes are read and dropped. */
    private volatile long severedBelow;

    /** The open connections by number, client socket first, so that {@link #restore()} can reset the severed ones. */
    private final Map<Long, Socket[]> connections = new ConcurrentHashMap<>();

    private TcpProxy(ServerSocket server, InetSocketAddress target) {
        this.server = server;
        this.target = target;
    }

    /** Starts a proxy to an etcd client URL such as {@code http://127.0.0.1:2379}. */
    public static TcpProxy start(String targetEndpoint) {
        URI uri = URI.create(targetEndpoint);
        try {
            ServerSocket server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
            TcpProxy proxy = new TcpProxy(server, new InetSocketAddress(uri.getHost(), uri.getPort()));
            Thread acceptor = new Thread(proxy::acceptLoop, "tcp-proxy-accept-" + server.getLocalPort());
            acceptor.setDaemon(true);
            acceptor.start();
            return proxy;
        }
        catch (IOException ex) {
            throw new IllegalStateException("Could not start a proxy to " + targetEndpoint, ex);
        }
    }

    /** @return the proxy's port on the loopback address */
    public int port() {
        return this.server.getLocalPort();
    }

    /** @return how many connections the proxy has forwarded since it started (severed ones included) */
    public long forwardedConnections() {
        return this.accepted.get();
    }

    /** The client URL of the proxy, for {@code Client.builder().endpoints(...)}. */
    public String endpoint() {
        return "http://127.0.0.1:" + this.server.getLocalPort();
    }

    /** Resets every open connection and refuses new ones (accepted, then reset) until {@link #restore()}. */
    public void reset() {
        synchronized (this.modeChanged) {
            setMode(Mode.RESET);
            this.sockets.forEach(TcpProxy::abort);
        }
    }

    /** Stops forwarding bytes in both directions, on open and new connections, until {@link #restore()}. */
    public void stall() {
        setMode(Mode.STALL);
    }

    /**
     * Delays every chunk of bytes by {@code latency} in each direction from now on (a round trip
     * then takes at least twice as long); {@link Duration#ZERO} forwards at once again.
     */
    public void delay(java.time.Duration latency) {
        this.latencyNanos = latency.toNanos();
    }

    /**
     * From now on drops every byte of the connections open now, in both directions, and keeps
     * them open, so neither end learns that they are dead; new connections are forwarded. Until
     * {@link #resetSevered()}.
     */
    public void severOpenConnections() {
        this.severedBelow = this.accepted.get() + 1;
    }

    /**
     * Cuts one direction until {@link #restore()}: the client's bytes still reach the server, the
     * server's answers are held. The server applies what it is asked while the client hears
     * nothing, as when only the return path of a network drops packets.
     */
    public void stallAnswers() {
        synchronized (this.modeChanged) {
            this.stallingAnswers = true;
            this.modeChanged.notifyAll();
        }
    }

    /**
     * Refuses new connections (accepted, then reset) until {@link #restore()}, and goes on
     * forwarding the open ones: a client that lost one of its connections cannot open it again,
     * while its others work.
     */
    public void refuseNewConnections() {
        this.refusingNew = true;
    }

    /**
     * Resets the connections that {@link #severOpenConnections()} severed, as a path that works
     * again answers a packet of a connection the network forgot.
     */
    public void resetSevered() {
        long severed = this.severedBelow;
        this.connections.forEach((number, pair) -> {
            if (number < severed) {
                abort(pair[0]);
                abort(pair[1]);
            }
        });
    }

    /** Forwards again, and accepts new connections; stalled bytes are delivered. */
    public void restore() {
        this.refusingNew = false;
        synchronized (this.modeChanged) {
            this.stallingAnswers = false;
            setMode(Mode.FORWARD);
        }
    }

    @Override
    public void close() {
        this.closed = true;
        setMode(Mode.RESET);
        try {
            this.server.close();
        }
        catch (IOException ex) {
            // Closing anyway.
        }
        this.sockets.forEach(TcpProxy::abort);
    }

    private void setMode(Mode mode) {
        synchronized (this.modeChanged) {
            this.mode = mode;
            this.modeChanged.notifyAll();
        }
    }

    private void acceptLoop() {
        while (!this.closed) {
            Socket client;
            try {
                client = this.server.accept();
            }
            catch (IOException ex) {
                return;
            }
            if (this.mode == Mode.RESET || this.refusingNew) {
                abort(client);
                continue;
            }
            Socket upstream = new Socket();
            try {
                upstream.connect(this.target, 5_000);
            }
            catch (IOException ex) {
                abort(client);
                abort(upstream);
                continue;
            }
            // Registered under the mode lock, so that a reset() either sees these sockets or runs first.
            synchronized (this.modeChanged) {
                if (this.mode == Mode.RESET) {
                    abort(client);
                    abort(upstream);
                    continue;
                }
                this.sockets.add(client);
                this.sockets.add(upstream);
            }
            long number = this.accepted.incrementAndGet();
            this.connections.put(number, new Socket[] { client, upstream });
            pump(client, upstream, "up", number);
            pump(upstream, client, "down", number);
        }
    }

    private void pump(Socket from, Socket to, String direction, long number) {
        Thread thread = new Thread(() -> {
            byte[] buffer = new byte[16 * 1024];
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                int read;
                while ((read = in.read(buffer)) != -1) {
                    long latency = this.latencyNanos;
                    if (latency > 0) {
                        java.util.concurrent.TimeUnit.NANOSECONDS.sleep(latency);
                    }
                    if (!awaitForwarding(direction.equals("down"))) {
                        break;
                    }
                    if (number < this.severedBelow) {
                        continue;
                    }
                    out.write(buffer, 0, read);
                    out.flush();
                }
            }
            catch (IOException ex) {
                // The connection was reset, by the proxy or a peer.
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
            finally {
                abort(from);
                abort(to);
                this.sockets.remove(from);
                this.sockets.remove(to);
                this.connections.remove(number);
            }
        }, "tcp-proxy-" + direction + "-" + from.getPort());
        thread.setDaemon(true);
        thread.start();
    }

    /** Waits while stalled (answers: also while only they are); false if the connection is to be reset instead. */
    private boolean awaitForwarding(boolean answers) {
        synchronized (this.modeChanged) {
            while (this.mode == Mode.STALL || answers && this.stallingAnswers && this.mode == Mode.FORWARD) {
                try {
                    this.modeChanged.wait();
                }
                catch (InterruptedException ex) {
                    Thread.currentThread().interrupt();
                    return false;
                }
            }
            return this.mode == Mode.FORWARD;
        }
    }

    /** Closes with an RST rather than a FIN, as a broken network path looks to the peer. */
    private static void abort(Socket socket) {
        try {
            if (!socket.isClosed()) {
                socket.setSoLinger(true, 0);
                socket.close();
            }
        }
        catch (SocketException ex) {
            // Already reset.
        }
        catch (IOException ex) {
            // Closing anyway.
        }
    }
}
