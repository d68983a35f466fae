package io.tenure.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.Status;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** CONNECTED, SUSPENDED and LOST on fake time, told to lease and client listeners in order. */
class ConnectionStateTest {
    private static final Duration TTL = Duration.ofSeconds(9);

    private final InProcessMembers members = new InProcessMembers(2);
    private final FakeTime time = members.time;
    private final TenureClient client = members.client();
    private final List<ConnectionState> seen = new CopyOnWriteArrayList<>();
    private final List<String> seenByClient = new CopyOnWriteArrayList<>();

    @AfterEach
    void tearDown() {
        members.close();
    }

    @Test
    void aBrokenStreamSuspendsTheLeaseUntilAnotherMemberAcknowledges() {
        client.addConnectionStateListener((lease, state) -> seenByClient.add(lease.id() + ":" + state));
        Lease lease = client.grantLease(TTL, "w");
        lease.addStateListener(seen::add);
        assertThat(lease.state()).isEqualTo(ConnectionState.CONNECTED);

        members.service(1).keepAlives = ScriptedLockService.KeepAlives.HOLD;
        members.service(0).breakStreams(Status.UNAVAILABLE.withDescription("member stopping"));
        time.runDueTasks();
        // Reopened on member 2 at once, keep-alive sent, not yet answered.
        assertThat(lease.state()).isEqualTo(ConnectionState.SUSPENDED);
        assertThat(lease.isValid()).isTrue();

        members.service(1).releaseHeldAcks();
        assertThat(lease.state()).isEqualTo(ConnectionState.CONNECTED);
        assertThat(seen).containsExactly(ConnectionState.SUSPENDED, ConnectionState.CONNECTED);
        assertThat(seenByClient).containsExactly(lease.id() + ":SUSPENDED", lease.id() + ":CONNECTED");
    }

    @Test
    void anUnansweredKeepAliveSuspendsAfterATenthOfTheTtlAndTheLeaseIsLostAtTheEndOfItsSafeWindow() throws Exception {
        Lease lease = client.grantLease(TTL, "w");
        lease.addStateListener(seen::add);
        members.service(0).keepAlives = ScriptedLockService.KeepAlives.SILENT;
        members.service(1).keepAlives = ScriptedLockService.KeepAlives.SILENT;

        time.advanceTo(Duration.ofMillis(3_000 + 899));
        assertThat(lease.state()).isEqualTo(ConnectionState.CONNECTED);
        time.advanceTo(Duration.ofMillis(3_900));
        assertThat(lease.state()).isEqualTo(ConnectionState.SUSPENDED);
        assertThat(lease.remaining()).as("the grant's window: TTL/3 + 2.5 s = 5.5 s").isEqualTo(Duration.ofMillis(1_600));

        time.advanceTo(Duration.ofMillis(5_500));
        assertThat(lease.state()).isEqualTo(ConnectionState.LOST);
        assertThat(lease.remaining()).isEqualTo(Duration.ZERO);
        assertThat(seen).containsExactly(ConnectionState.SUSPENDED, ConnectionState.LOST);
        assertThat(lease.lost().get().reason()).isEqualTo(LeaseLoss.Reason.UNREACHABLE);
    }

    @Test
    void aRevokedLeaseIsLostWithoutPassingThroughSuspended() {
        Lease lease = client.grantLease(TTL, "w");
        lease.addStateListener(seen::add);
        lease.revoke();
        assertThat(seen).containsExactly(ConnectionState.LOST);
    }
}
