package io.github.distlock.testsupport;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

class TcpProxyTests {

    @Test
    void stalledAnswersLetRequestsThroughAndArriveAfterTheRestore() throws Exception {
        try (ServerSocket server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
                TcpProxy proxy = TcpProxy.start("tcp://127.0.0.1:" + server.getLocalPort())) {
            CompletableFuture<Integer> received = new CompletableFuture<>();
            Thread echo = new Thread(() -> {
                try (Socket accepted = server.accept()) {
                    InputStream in = accepted.getInputStream();
                    OutputStream out = accepted.getOutputStream();
                    int request = in.read();
                    received.complete(request);
                    out.write(request + 1);
                    out.flush();
                    in.read();
                }
                catch (IOException ex) {
                    received.completeExceptionally(ex);
                }
            });
            echo.setDaemon(true);
            echo.start();
            try (Socket client = new Socket(InetAddress.getLoopbackAddress(), proxy.port())) {
                proxy.stallAnswers();
                client.getOutputStream().write(41);
                client.getOutputStream().flush();
                assertThat(received.get(30, TimeUnit.SECONDS)).isEqualTo(41);
                client.setSoTimeout(500);
                assertThatExceptionOfType(SocketTimeoutException.class).isThrownBy(() -> client.getInputStream().read());
                proxy.restore();
                client.setSoTimeout(30_000);
                assertThat(client.getInputStream().read()).isEqualTo(42);
            }
        }
    }

    @Test
    void severedConnectionsStaySilentUntilTheyAreReset() throws Exception {
        try (ServerSocket server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
                TcpProxy proxy = TcpProxy.start("tcp://127.0.0.1:" + server.getLocalPort());
                Socket client = new Socket(InetAddress.getLoopbackAddress(), proxy.port());
                Socket accepted = server.accept()) {
            // The proxy numbers a connection once its upstream side is connected: the server may accept it first.
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (proxy.forwardedConnections() < 1 && System.nanoTime() - deadline < 0) {
                Thread.onSpinWait();
            }
            assertThat(proxy.forwardedConnections()).isEqualTo(1);
            proxy.severOpenConnections();
            client.getOutputStream().write(1);
            client.getOutputStream().flush();
            accepted.setSoTimeout(500);
            assertThatExceptionOfType(SocketTimeoutException.class).isThrownBy(() -> accepted.getInputStream().read());
            proxy.restore();
            accepted.setSoTimeout(500);
            assertThatExceptionOfType(SocketTimeoutException.class).as("still severed after restore()")
                .isThrownBy(() -> accepted.getInputStream().read());
            proxy.resetSevered();
            client.setSoTimeout(30_000);
            assertThatExceptionOfType(IOException.class).isThrownBy(() -> {
                // A reset connection fails a read (or ends it) at once.
                if (client.getInputStream().read() == -1) {
                    throw new IOException("closed");
                }
            });
        }
    }
}
