package io.tenure.server.http;

import com.fasterxml.jackson.databind.JsonNode;
import io.tenure.testing.FreePorts;
import io.tenure.testing.TenureCluster;
import io.tenure.server.http.HttpMember.Reply;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

import static io.tenure.server.http.HttpLockApiTest.assertError;
import static org.assertj.core.api.Assertions.assertThat;

/** {@code /healthz}, {@code /readyz}, and the 503 of a member that cannot serve. */
class HttpHealthTest {
    @TempDir
    Path dir;

    @Test
    void aServingMemberIsHealthyAndReadyUntilItDrains() throws Exception {
        try (HttpMember member = HttpMember.start(dir)) {
            Reply healthy = member.get("/healthz");
            Reply ready = member.get("/readyz");

            assertThat(healthy.status()).isEqualTo(200);
            assertThat(healthy.json().toString()).isEqualTo("{\"status\":\"serving\"}");
            assertThat(ready.status()).as(ready.toString()).isEqualTo(200);
            JsonNode r = ready.json();
            assertThat(r.get("status").asText()).isEqualTo("ready");
            assertThat(r.get("leader").asText()).isEqualTo("n1");
            assertThat(r.get("applied_index").asLong()).isPositive().isGreaterThanOrEqualTo(r.get("commit_index").asLong());

            member.server().member().startDraining();
            Reply draining = member.get("/readyz");

            assertThat(draining.status()).isEqualTo(503);
            assertThat(draining.json().get("status").asText()).isEqualTo("draining");
            assertThat(member.get("/healthz").status()).isEqualTo(200);
        }
    }

    @Test
    void aMemberWithoutALeaderIsHealthyButNotReadyAndAnswers503WithRetryAfter() throws Exception {
        // n2 never starts: n1 can never win an election, so it knows no leader.
        Map<String, String> peers = new LinkedHashMap<>();
        int[] ports = FreePorts.take(2);
        peers.put("n1", "127.0.0.1:" + ports[0]);
        peers.put("n2", "127.0.0.1:" + ports[1]);
        try (HttpMember member = HttpMember.start(TenureCluster.builder().dataDir(dir).config(c -> c.withPeers(peers))
                .waitForLeader(false))) {
            Reply healthy = member.get("/healthz");
            Reply ready = member.get("/readyz");
            Reply read = member.get("/v1/locks/anything");
            Reply status = member.get("/v1/status");

            assertThat(healthy.status()).isEqualTo(200);
            assertThat(ready.status()).as(ready.toString()).isEqualTo(503);
            assertThat(ready.json().get("status").asText()).isEqualTo("no_leader");
            assertThat(ready.json().get("reason").asText()).isNotBlank();
            assertError(read, 503, "unavailable", null);
            assertThat(read.header("Retry-After")).isEqualTo("1");
            assertThat(status.status()).as(status.toString()).isEqualTo(200);
            assertThat(status.json().get("leader").isNull()).isTrue();
            assertThat(status.json().get("members")).hasSize(2);
        }
    }

    @Test
    void theHttpPortIsBoundAndReleasedWithTheMember() throws Exception {
        int port;
        try (HttpMember member = HttpMember.start(dir)) {
            port = member.server().httpPort();
            assertThat(port).isPositive().isNotEqualTo(member.server().clientPort());
        }
        try (ServerSocket again = new ServerSocket(port, 1, java.net.InetAddress.getByName("127.0.0.1"))) {
            assertThat(again.getLocalPort()).isEqualTo(port);
        }
        int taken;
        try (ServerSocket busy = new ServerSocket(0, 1, java.net.InetAddress.getByName("127.0.0.1"))) {
            taken = busy.getLocalPort();
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> HttpMember.start(dir.resolve("other"), c -> c.withHttpPort(taken)))
                    .isInstanceOf(UncheckedIOException.class).cause()
                    .isInstanceOf(IOException.class).hasMessageContaining("HTTP").hasMessageContaining(String.valueOf(taken));
        }
    }

}
