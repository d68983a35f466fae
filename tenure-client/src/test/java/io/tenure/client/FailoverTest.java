package io.tenure.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.Status;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class FailoverTest {
    private final InProcessMembers members = new InProcessMembers(2);
    private final ScriptedLockService first = members.service(0);
    private final ScriptedLockService second = members.service(1);
    private final TenureClient client = members.client();

    @AfterEach
    void tearDown() {
        members.close();
    }

    @Test
    void anUnavailableMemberPassesTheCallAndThePreferenceToTheNext() {
        first.statusFailure = Status.UNAVAILABLE.withDescription("member n1 is not ready");

        assertThat(client.status().getMemberName()).isEqualTo("n2");
        assertThat(client.status().getMemberName()).isEqualTo("n2");

        assertThat(first.statusCalls).hasValue(1);
        assertThat(second.statusCalls).hasValue(2);
    }

    @Test
    void whenEveryMemberIsUnavailableTheCallFailsAfterOneTryEach() {
        first.statusFailure = Status.UNAVAILABLE.withDescription("no leader");
        second.statusFailure = Status.UNAVAILABLE.withDescription("no leader");

        assertThatThrownBy(client::status).isInstanceOf(UnavailableException.class).hasMessageContaining("no leader");
        assertThat(first.statusCalls).hasValue(1);
        assertThat(second.statusCalls).hasValue(1);
    }

    @Test
    void otherRefusalsAreNotRetriedElsewhere() {
        first.statusFailure = Status.INVALID_ARGUMENT.withDescription("bad");

        assertThatThrownBy(client::status).isInstanceOf(InvalidArgumentException.class);
        assertThat(second.statusCalls).hasValue(0);
    }

    @Test
    void aBrokenKeepAliveStreamReopensOnTheNextMember() {
        Lease lease = client.grantLease(Duration.ofSeconds(9), "worker-1");

        first.breakStreams(Status.UNAVAILABLE.withDescription("shutting down"));
        members.time.runDueTasks();

        assertThat(second.streamsOpened).hasValue(1);
        assertThat(second.keepAlivesReceived).hasSize(1);
        assertThat(lease.isValid()).isTrue();
    }

    @Test
    void malformedEndpointsAreRefusedUpFront() {
        for (String bad : List.of("localhost", "localhost:", ":7070", "host:port", "host:70000")) {
            assertThatThrownBy(() -> TenureClient.connect(List.of(bad)))
                    .as(bad).isInstanceOf(IllegalArgumentException.class).hasMessageContaining(bad);
        }
        assertThatThrownBy(() -> TenureClient.connect(List.of())).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void wellFormedEndpointsConnectLazily() {
        try (TenureClient lazy = TenureClient.connect(List.of("127.0.0.1:1", "[::1]:7070", "localhost:7070"))) {
            assertThat(lazy).isNotNull();
        }
    }
}
