package io.tenure.server.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tenure.client.Lease;
import io.tenure.client.LimitExceededException;
import io.tenure.client.TenureClient;
import io.tenure.proto.v1.PermissionLevel;
import io.tenure.testing.Await;
import io.tenure.testing.TenureCluster;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Quotas per user while authentication is on: leases a user owns, what its leases hold and wait
 * for, and its requests per second, each refused RESOURCE_EXHAUSTED / 429 naming the user and the
 * flag, and each user's own: another user is not held back by it.
 */
class QuotasTest {
    private static TenureCluster cluster;
    private static String quotaToken;
    private static String otherToken;
    private static String rateToken;

    @BeforeAll
    static void start() {
        cluster = TenureCluster.builder().members(1)
                .config(c -> c.withLimits(c.limits().withMaxLeasesPerUser(3).withMaxLocksPerUser(2).withMaxRequestsPerUser(20))).start();
        try (TenureClient anonymous = TenureClient.builder().endpoints(cluster.endpoints()).build()) {
            anonymous.auth().addUser("admin", "admin password");
            anonymous.auth().grantRole("admin", "root");
            anonymous.auth().addRole("app");
            anonymous.auth().grantPermission("app", "*", "app/", PermissionLevel.WRITE);
            for (String user : List.of("quota", "other", "rate")) {
                anonymous.auth().addUser(user, user + " password");
                anonymous.auth().grantRole(user, "app");
            }
            anonymous.auth().enable();
            quotaToken = anonymous.auth().authenticate("quota", "quota password", Duration.ofMinutes(10));
            otherToken = anonymous.auth().authenticate("other", "other password", Duration.ofMinutes(10));
            rateToken = anonymous.auth().authenticate("rate", "rate password", Duration.ofMinutes(10));
        }
    }

    @AfterAll
    static void stop() {
        cluster.close();
    }

    private static TenureClient client(String token) {
        return TenureClient.builder().endpoints(cluster.endpoints()).token(token).requestTimeout(Duration.ofSeconds(5)).build();
    }

    @Test
    void aUserMayOwnOnlySoManyLeasesAndHoldSoMuch() {
        try (TenureClient quota = client(quotaToken); TenureClient other = client(otherToken)) {
            List<Lease> leases = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                leases.add(quota.grantLease(Duration.ofSeconds(30), "quota-" + i));
            }
            assertThatThrownBy(() -> quota.grantLease(Duration.ofSeconds(30), "quota-3")).isInstanceOf(LimitExceededException.class)
                    .hasMessageContaining("user 'quota' already owns 3 live leases").hasMessageContaining("--max-leases-per-user");
            // Another user's quota is its own.
            Lease others = other.grantLease(Duration.ofSeconds(30), "other-0");

            Lease lease = leases.get(0);
            quota.acquire("app/a", lease, Duration.ofSeconds(5), null);
            quota.acquire("app/b", leases.get(1), Duration.ofSeconds(5), null);
            assertThatThrownBy(() -> quota.acquire("app/c", leases.get(2), Duration.ofSeconds(5), null))
                    .isInstanceOf(LimitExceededException.class).hasMessageContaining("user 'quota' already holds or waits for 2")
                    .hasMessageContaining("--max-locks-per-user");
            assertThat(other.acquire("app/c", others, Duration.ofSeconds(5), null).fencingToken()).isPositive();

            // Revoking frees the quota: at once for leases; for what they held, once the member counts again (within 100 ms).
            leases.get(0).revoke();
            quota.grantLease(Duration.ofSeconds(30), "quota-again");
            Await.until("app/d acquired once the user's holds are counted again", Duration.ofSeconds(10), () -> {
                try {
                    return quota.acquire("app/d", leases.get(2), Duration.ofSeconds(5), null).fencingToken() > 0;
                } catch (LimitExceededException stillCounted) {
                    return false;
                }
            });
        }
    }

    @Test
    void aUserOverItsRequestRateIsRefusedAndOthersAreNot() throws Exception {
        HttpClient http = HttpClient.newHttpClient();
        String url = cluster.httpEndpoint(0) + "/v1/counters/app/rate";
        String refusal = null;
        // 20 in the bucket and 20 more a second: requests in a row are refused once they come faster than 20 a second,
        // which 2,000 of them do unless each takes over 50 ms.
        for (int i = 0; i < 2_000 && refusal == null; i++) {
            HttpResponse<String> answer = http.send(HttpRequest.newBuilder(URI.create(url)).header("Authorization", "Bearer " + rateToken)
                    .build(), HttpResponse.BodyHandlers.ofString());
            if (answer.statusCode() == 429) {
                refusal = answer.body();
            } else {
                assertThat(answer.statusCode()).as(answer.body()).isIn(200, 404);
            }
        }
        assertThat(refusal).contains("user 'rate' may make at most 20 requests per second").contains("--max-requests-per-user");
        HttpResponse<String> others = http.send(HttpRequest.newBuilder(URI.create(url)).header("Authorization", "Bearer " + otherToken)
                .build(), HttpResponse.BodyHandlers.ofString());
        assertThat(others.statusCode()).as("another user's bucket").isIn(200, 404);
    }
}
