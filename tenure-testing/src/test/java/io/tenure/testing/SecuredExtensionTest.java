package io.tenure.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tenure.client.Lease;
import io.tenure.client.LockHandle;
import io.tenure.client.PermissionDeniedException;
import io.tenure.client.TenureClient;
import io.tenure.client.UnauthenticatedException;
import io.tenure.proto.v1.PermissionLevel;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A secured cluster from the extension, as a user's test registers it: TLS on every port and
 * authentication on, the injected client working as root, and the test's own users.
 */
class SecuredExtensionTest {
    @RegisterExtension
    static final TenureExtension tenure = TenureExtension.members(3).secured();

    @Test
    void theInjectedClientIsRootOverTls(TenureClient client) {
        assertThat(client.auth().status().enabled()).isTrue();
        assertThat(client.auth().status().user()).isEqualTo("root");
        try (Lease lease = client.grantLease(Duration.ofSeconds(30), "worker-1");
             LockHandle lock = client.acquire("jobs/nightly", lease, Duration.ofSeconds(5), null)) {
            assertThat(lock.fencingToken()).isPositive();
        }
        assertThat(tenure.cluster().httpEndpoint(0)).startsWith("https://");
    }

    @Test
    void aTestMakesItsOwnUsersAndACallWithoutACredentialIsRefused(TenureCluster cluster) {
        TenureClient root = tenure.client();
        root.auth().addUser("reports", "reports password");
        root.auth().addRole("report-readers");
        root.auth().grantPermission("report-readers", "kv", "reports/", PermissionLevel.READ);
        root.auth().grantRole("reports", "report-readers");
        String token = root.auth().authenticate("reports", "reports password", Duration.ofMinutes(5));

        TenureClient reports = cluster.newClientWithToken(token);
        assertThat(reports.kv().get("reports/daily")).isEmpty();
        assertThatThrownBy(() -> reports.kv().put("reports/daily", "x")).isInstanceOf(PermissionDeniedException.class);

        TenureClient nobody = cluster.newClientWithToken(null);
        assertThatThrownBy(() -> nobody.grantLease(Duration.ofSeconds(10), "x")).isInstanceOf(UnauthenticatedException.class);
        // A plaintext client does not get through the TLS port at all.
        try (TenureClient plaintext = TenureClient.builder().endpoints(List.of(cluster.endpoint(0)))
                .requestTimeout(Duration.ofSeconds(3)).build()) {
            assertThatThrownBy(() -> plaintext.grantLease(Duration.ofSeconds(10), "x")).isInstanceOf(RuntimeException.class);
        }
    }
}
