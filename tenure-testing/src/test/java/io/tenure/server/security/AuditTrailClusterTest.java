package io.tenure.server.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.tenure.client.Lease;
import io.tenure.client.PermissionDeniedException;
import io.tenure.client.TenureClient;
import io.tenure.client.UnauthenticatedException;
import io.tenure.proto.v1.PermissionLevel;
import io.tenure.testing.Await;
import io.tenure.testing.TenureCluster;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A member with {@code --audit-file}: grants, releases, revocations, management and refusals
 * reach the trail with the user, the caller's address, the resource and the outcome, and no
 * password or token does.
 */
class AuditTrailClusterTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String ADMIN_PASSWORD = "admin audit password";
    private static final String WORKER_PASSWORD = "worker audit password";

    @TempDir
    Path dir;

    @Test
    void grantsReleasesManagementAndRefusalsAreRecordedWithoutSecrets() throws Exception {
        Path file = dir.resolve("audit.jsonl");
        try (TenureCluster cluster = TenureCluster.builder().members(1)
                .config(c -> c.withAuditTrail(new AuditTrail.Settings(file, 1 << 20, 3))).start()) {
            String adminToken;
            String workerToken;
            try (TenureClient anonymous = TenureClient.builder().endpoints(cluster.endpoints()).build()) {
                anonymous.auth().addUser("admin", ADMIN_PASSWORD);
                anonymous.auth().grantRole("admin", "root");
                anonymous.auth().addRole("jobs");
                anonymous.auth().grantPermission("jobs", "lock", "jobs/", PermissionLevel.WRITE);
                anonymous.auth().addUser("worker", WORKER_PASSWORD);
                anonymous.auth().grantRole("worker", "jobs");
                anonymous.auth().enable();
                adminToken = anonymous.auth().authenticate("admin", ADMIN_PASSWORD, Duration.ofMinutes(10));
                workerToken = anonymous.auth().authenticate("worker", WORKER_PASSWORD, Duration.ofMinutes(10));
                assertThatThrownBy(() -> anonymous.grantLease(Duration.ofSeconds(10), "nobody")).isInstanceOf(UnauthenticatedException.class);
            }
            long token;
            try (TenureClient worker = TenureClient.builder().endpoints(cluster.endpoints()).token(workerToken).build()) {
                Lease lease = worker.grantLease(Duration.ofSeconds(30), "worker-1");
                var held = worker.acquire("jobs/nightly", lease, Duration.ofSeconds(5), null);
                token = held.fencingToken();
                held.release();
                assertThatThrownBy(() -> worker.acquire("other/x", lease, Duration.ofSeconds(5), null))
                        .isInstanceOf(PermissionDeniedException.class);
                lease.revoke();
            }

            Await.until("the trail has the worker's release and revocation", Duration.ofSeconds(10),
                    () -> has(file, l -> l.path("action").asText().equals("lease_revoke") && l.path("user").asText().equals("worker")));
            List<JsonNode> lines = lines(file);
            assertThat(lines).anySatisfy(l -> {
                assertThat(l.get("action").asText()).isEqualTo("acquire");
                assertThat(l.get("user").asText()).isEqualTo("worker");
                assertThat(l.get("kind").asText()).isEqualTo("lock");
                assertThat(l.get("resource").asText()).isEqualTo("jobs/nightly");
                assertThat(l.get("token").asLong()).isEqualTo(token);
                assertThat(l.get("outcome").asText()).isEqualTo("granted");
                assertThat(l.get("remote").asText()).startsWith("127.0.0.1:");
            });
            assertThat(lines).anySatisfy(l -> {
                assertThat(l.get("action").asText()).isEqualTo("release");
                assertThat(l.get("resource").asText()).isEqualTo("jobs/nightly");
                assertThat(l.get("outcome").asText()).isEqualTo("released");
            });
            assertThat(lines).anySatisfy(l -> {
                assertThat(l.get("user").asText()).isEqualTo("worker");
                assertThat(l.get("resource").asText()).isEqualTo("other/x");
                assertThat(l.get("outcome").asText()).isEqualTo("permission_denied");
            });
            assertThat(lines).anySatisfy(l -> {
                assertThat(l.get("action").asText()).isEqualTo("role_grant");
                assertThat(l.get("resource").asText()).isEqualTo("jobs");
                assertThat(l.get("message").asText()).isEqualTo("write on lock 'jobs/'");
            });
            assertThat(lines).anySatisfy(l -> assertThat(l.get("action").asText()).isEqualTo("auth_enable"));
            assertThat(lines).anySatisfy(l -> {
                assertThat(l.get("action").asText()).isEqualTo("authenticate");
                assertThat(l.get("outcome").asText()).isEqualTo("unauthenticated");
            });
            String everything = Files.readString(file);
            assertThat(everything).doesNotContain(ADMIN_PASSWORD).doesNotContain(WORKER_PASSWORD).doesNotContain(adminToken)
                    .doesNotContain(workerToken).doesNotContain("tnr_").doesNotContain("pbkdf2")
                    .doesNotContain(BearerTokens.hash(workerToken));
        }
    }

    private static boolean has(Path file, Predicate<JsonNode> wanted) {
        return Files.exists(file) && lines(file).stream().anyMatch(wanted);
    }

    private static List<JsonNode> lines(Path file) {
        try {
            List<JsonNode> parsed = new ArrayList<>();
            for (String line : Files.readAllLines(file)) {
                parsed.add(JSON.readTree(line));
            }
            return parsed;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
