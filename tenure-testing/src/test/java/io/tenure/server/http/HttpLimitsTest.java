package io.tenure.server.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.tenure.server.ServerLimits;
import io.tenure.server.http.HttpMember.Reply;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The member's limits over HTTP: 429 with {@code limit_exceeded} naming the option, and the member serves on. */
class HttpLimitsTest {
    @TempDir
    Path dir;

    @Test
    void waitersPerLockAndLeasesPerClientAnswer429() throws Exception {
        ServerLimits limits = ServerLimits.defaults().withMaxLeasesPerClient(1);
        try (HttpMember member = HttpMember.start(dir, c -> c.withLimits(limits))) {
            Reply first = member.post("/v1/locks/l1/acquire", "{\"owner_id\":\"w\",\"ttl_ms\":30000}");
            assertThat(first.status()).isEqualTo(200);
            Reply second = member.post("/v1/locks/l2/acquire", "{\"owner_id\":\"w\",\"ttl_ms\":30000}");
            assertThat(second.status()).isEqualTo(429);
            assertThat(second.json().get("error").asText()).isEqualTo("limit_exceeded");
            assertThat(second.json().get("message").asText()).contains("--max-leases-per-client").contains("'w'");
            assertThat(member.post("/v1/locks/l2/acquire", "{\"owner_id\":\"other\",\"ttl_ms\":30000}").status())
                    .as("another owner is served").isEqualTo(200);
        }
    }

    @Test
    void overTheRequestRateTheApiAnswers429ButHealthAndMetricsStillAnswer() throws Exception {
        try (HttpMember member = HttpMember.start(dir, c -> c.withLimits(ServerLimits.defaults().withMaxRequestsPerSecond(3)))) {
            Reply refused = null;
            for (int i = 0; i < 50 && refused == null; i++) {
                Reply r = member.get("/v1/locks/rate");
                if (r.status() == 429) {
                    refused = r;
                }
            }
            assertThat(refused).isNotNull();
            assertThat(refused.json().get("message").asText()).contains("--max-requests-per-second");
            assertThat(member.get("/healthz").status()).isEqualTo(200);
            assertThat(member.get("/metrics").status()).isEqualTo(200);
        }
    }

    @Test
    void aConnectionBeyondTheLimitIsToldWhyAndClosed() throws Exception {
        try (HttpMember member = HttpMember.start(dir, c -> c.withLimits(ServerLimits.defaults().withMaxConnections(1)));
             Socket held = new Socket("127.0.0.1", member.server().httpPort())) {
            // The first connection stays open (keep-alive) and is served.
            assertThat(exchange(held, false)).startsWith("HTTP/1.1 404").contains("not_found");
            try (Socket extra = new Socket("127.0.0.1", member.server().httpPort())) {
                String answer = exchange(extra, true);
                assertThat(answer).startsWith("HTTP/1.1 429").contains("limit_exceeded").contains("--max-connections");
            }
            assertThat(exchange(held, false)).as("the first connection is still served").startsWith("HTTP/1.1 404");
        }
    }

    /** One GET of a free lock (404) on {@code socket}; reads the whole answer (until close, or its Content-Length). */
    private static String exchange(Socket socket, boolean close) throws IOException {
        socket.setSoTimeout(30_000);
        OutputStream out = socket.getOutputStream();
        out.write(("GET /v1/locks/x HTTP/1.1\r\nHost: 127.0.0.1\r\n" + (close ? "Connection: close\r\n" : "") + "\r\n")
                .getBytes(StandardCharsets.US_ASCII));
        out.flush();
        InputStream in = socket.getInputStream();
        StringBuilder head = new StringBuilder();
        while (!head.toString().endsWith("\r\n\r\n")) {
            int b = in.read();
            if (b < 0) {
                return head.toString();
            }
            head.append((char) b);
        }
        int length = 0;
        for (String line : head.toString().split("\r\n")) {
            if (line.toLowerCase().startsWith("content-length:")) {
                length = Integer.parseInt(line.substring("content-length:".length()).trim());
            }
        }
        return head + new String(in.readNBytes(length), StandardCharsets.UTF_8);
    }
}
