package io.tenure.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.tenure.testing.FreePorts;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The F11 peer proxy, a real child process in front of a real echo socket. Only lower bounds on
 * time are asserted (a held byte cannot arrive early); nothing here depends on the machine being fast.
 */
class PeerProxyTest {
    @TempDir
    Path dir;

    @Test
    void itForwardsDelaysBothWaysOnCommandAndHeals() throws Exception {
        try (ServerSocket echo = new ServerSocket(0, 5, InetAddress.getLoopbackAddress());
             PeerProxies proxies = new PeerProxies()) {
            Thread server = new Thread(() -> serveEcho(echo), "echo");
            server.setDaemon(true);
            server.start();
            int port = FreePorts.one();
            proxies.start("n1", Placement.LOOPBACK, "127.0.0.1", port, echo.getLocalPort(), dir.resolve("n1.log"));

            try (Socket client = new Socket(InetAddress.getLoopbackAddress(), port)) {
                client.setSoTimeout(10_000);
                roundTrip(client, 1); // forwarded

                proxies.delay("n1", Duration.ofMillis(150), 0);
                // Held 150 ms on the way in and 150 ms on the way back.
                assertThat(roundTrip(client, 2)).isGreaterThanOrEqualTo(Duration.ofMillis(300).toNanos());

                proxies.delay("n1", Duration.ZERO, 1.0);
                // Every chunk "lost": each waits for its retransmission, both ways.
                assertThat(roundTrip(client, 3)).isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(2 * PeerProxy.RETRANSMIT_MILLIS));

                proxies.heal("n1"); // the proxy confirms ("ok heal"); bytes flow as before
                roundTrip(client, 4);
            }
        }
    }

    private static long roundTrip(Socket client, int value) throws IOException {
        OutputStream out = client.getOutputStream();
        InputStream in = client.getInputStream();
        long start = System.nanoTime();
        out.write(value);
        out.flush();
        assertThat(in.read()).isEqualTo(value);
        return System.nanoTime() - start;
    }

    private static void serveEcho(ServerSocket listener) {
        while (true) {
            try (Socket s = listener.accept()) {
                InputStream in = s.getInputStream();
                OutputStream out = s.getOutputStream();
                int b;
                while ((b = in.read()) >= 0) {
                    out.write(b);
                    out.flush();
                }
            } catch (IOException closed) {
                return;
            }
        }
    }
}
