package io.github.distlock.bench;

import java.io.FilterInputStream;
import java.io.FilterOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.concurrent.atomic.AtomicLong;

import javax.net.SocketFactory;

/**
 * Plain sockets that count round trips, for the PostgreSQL driver's {@code socketFactory}
 * property: a round trip is a read of the server's answer after the client wrote something, on any
 * socket this factory made. A connection that only listens (notifications) counts none.
 */
public final class CountingSocketFactory extends SocketFactory {

    private static final AtomicLong ROUND_TRIPS = new AtomicLong();

    /** The driver instantiates this class by name. */
    public CountingSocketFactory() {
    }

    /** @return round trips on every socket of this factory so far */
    static long roundTrips() {
        return ROUND_TRIPS.get();
    }

    @Override
    public Socket createSocket() {
        return new CountingSocket();
    }

    @Override
    public Socket createSocket(String host, int port) throws IOException {
        Socket socket = new CountingSocket();
        socket.connect(new InetSocketAddress(host, port));
        return socket;
    }

    @Override
    public Socket createSocket(String host, int port, InetAddress localHost, int localPort) throws IOException {
        Socket socket = new CountingSocket();
        socket.bind(new InetSocketAddress(localHost, localPort));
        socket.connect(new InetSocketAddress(host, port));
        return socket;
    }

    @Override
    public Socket createSocket(InetAddress host, int port) throws IOException {
        Socket socket = new CountingSocket();
        socket.connect(new InetSocketAddress(host, port));
        return socket;
    }

    @Override
    public Socket createSocket(InetAddress address, int port, InetAddress localAddress, int localPort)
            throws IOException {
        Socket socket = new CountingSocket();
        socket.bind(new InetSocketAddress(localAddress, localPort));
        socket.connect(new InetSocketAddress(address, port));
        return socket;
    }

    private static final class CountingSocket extends Socket {

        /** Whether the client wrote since the last answer it read. */
        private volatile boolean sent;

        private InputStream in;

        private OutputStream out;

        @Override
        public synchronized InputStream getInputStream() throws IOException {
            if (this.in == null) {
                this.in = new FilterInputStream(super.getInputStream()) {

                    @Override
                    public int read() throws IOException {
                        int read = super.read();
                        answered(read >= 0);
                        return read;
                    }

                    @Override
                    public int read(byte[] buffer, int offset, int length) throws IOException {
                        int read = super.read(buffer, offset, length);
                        answered(read > 0);
                        return read;
                    }
                };
            }
            return this.in;
        }

        @Override
        public synchronized OutputStream getOutputStream() throws IOException {
            if (this.out == null) {
                this.out = new FilterOutputStream(super.getOutputStream()) {

                    @Override
                    public void write(int value) throws IOException {
                        this.out.write(value);
                        CountingSocket.this.sent = true;
                    }

                    @Override
                    public void write(byte[] buffer, int offset, int length) throws IOException {
                        this.out.write(buffer, offset, length);
                        CountingSocket.this.sent = true;
                    }
                };
            }
            return this.out;
        }

        private void answered(boolean data) {
            if (data && this.sent) {
                this.sent = false;
                ROUND_TRIPS.incrementAndGet();
            }
        }
    }
}
