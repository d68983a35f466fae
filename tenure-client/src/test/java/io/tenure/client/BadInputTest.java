package io.tenure.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Bad input is refused with a message naming the problem before anything is sent. */
class BadInputTest {
    private final InProcessMembers members = new InProcessMembers(1);
    private final ScriptedLockService server = members.service(0);
    private final TenureClient client = members.client();

    @AfterEach
    void tearDown() {
        members.close();
    }

    @Test
    void malformedEndpointsAreRefusedWhenTheClientIsBuilt() {
        assertThatThrownBy(() -> TenureClient.connect(List.of())).hasMessageContaining("at least one endpoint");
        assertThatThrownBy(() -> TenureClient.connect(List.of("localhost"))).hasMessageContaining("'localhost' must be host:port");
        assertThatThrownBy(() -> TenureClient.connect(List.of("localhost:"))).hasMessageContaining("must be host:port");
        assertThatThrownBy(() -> TenureClient.connect(List.of("localhost:http"))).hasMessageContaining("non-numeric port");
        assertThatThrownBy(() -> TenureClient.connect(List.of("localhost:70000"))).hasMessageContaining("outside 1-65535");
        assertThatThrownBy(() -> TenureClient.connect(List.of("http://localhost:7070"))).hasMessageContaining("without a scheme");
        assertThatThrownBy(() -> TenureClient.connect(Arrays.asList("127.0.0.1:7070", null))).hasMessageContaining("null");
    }

    @Test
    void aTtlBelowTheMinimumOrAboveTheMaximumIsRefusedBeforeAGrantIsSent() {
        assertThatThrownBy(() -> client.grantLease(Duration.ofMillis(999), "w"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at least 1000 ms").hasMessageContaining("999 ms");
        assertThatThrownBy(() -> client.grantLease(Duration.ZERO, "w")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> client.grantLease(Duration.ofSeconds(-5), "w")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> client.grantLease(Duration.ofHours(25), "w")).hasMessageContaining("at most 24 h");
        assertThatThrownBy(() -> client.grantLease(Duration.ofSeconds(5), "x".repeat(257))).hasMessageContaining("client id is 257 bytes");
        assertThatThrownBy(() -> TenureClient.builder().sessionTtl(Duration.ofMillis(10))).hasMessageContaining("at least 1000 ms");
        assertThat(server.grants).isEmpty();
    }

    @Test
    void blankOrOversizedLockNamesAndMetadataAreRefusedBeforeAnythingIsSent() {
        Lease lease = client.grantLease(Duration.ofSeconds(9), "w");
        for (String blank : new String[] {null, "", "   ", "\t\n"}) {
            assertThatThrownBy(() -> client.lock(blank)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("lock name must not be blank");
            assertThatThrownBy(() -> client.acquire(blank, lease, null, null)).hasMessageContaining("lock name must not be blank");
            assertThatThrownBy(() -> client.describe(blank)).hasMessageContaining("lock name must not be blank");
        }
        assertThatThrownBy(() -> client.lock("é".repeat(513))).hasMessageContaining("1026 bytes").hasMessageContaining("limit of 1024");
        assertThatThrownBy(() -> client.acquire("k", lease, null, new byte[64 * 1024 + 1])).hasMessageContaining("metadata is 65537 bytes");
        assertThatThrownBy(() -> client.lock("k", lease).acquireAsync(Duration.ofSeconds(-1))).hasMessageContaining("timeout must be zero or positive");
        assertThat(server.locks).isEmpty();
    }

    @Test
    void aHandleUsedAfterReleaseOrAfterItsLeaseWasLostSaysSoAndReleasingTwiceIsANoOp() throws Exception {
        Lease lease = client.grantLease(Duration.ofSeconds(9), "w");
        LockHandle handle = client.lock("k", lease).acquire();
        assertThat(handle.ensureValid()).isSameAs(handle);

        handle.release();
        handle.release();
        handle.close();
        assertThat(server.unlocks).hasSize(1);
        assertThatThrownBy(handle::ensureValid).isInstanceOf(LockReleasedException.class)
                .hasMessageContaining("lock 'k'").hasMessageContaining("was released");

        LockHandle other = client.lock("other", lease).acquire();
        server.keepAlives = ScriptedLockService.KeepAlives.SILENT;
        members.time.advanceTo(lease.safeWindow());
        assertThat(lease.isValid()).isFalse();
        assertThatThrownBy(other::ensureValid).isInstanceOf(LeaseLostException.class).hasMessageContaining("UNREACHABLE");
        assertThatThrownBy(() -> client.lock("k", lease).acquire()).isInstanceOf(LeaseLostException.class);
        assertThat(server.locks).hasSize(2);
    }

    @Test
    void aLeaseOfAnotherClientIsRefused() {
        TenureClient second = members.client();
        Lease foreign = second.grantLease(Duration.ofSeconds(9), "w2");
        assertThatThrownBy(() -> client.lock("k", foreign)).hasMessageContaining("belongs to another client");
    }
}
