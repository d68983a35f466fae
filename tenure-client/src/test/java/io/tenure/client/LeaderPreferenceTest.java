package io.tenure.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.tenure.proto.v1.LockResponse;
import io.tenure.proto.v1.ResponseHeader;
import io.tenure.proto.v1.UnlockRequest;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A follower forwards every write to the leader, so a client whose calls a follower answers moves
 * to the leader that follower names in the answer's header, when the leader is one of its
 * endpoints; a name it does not know moves nothing.
 */
class LeaderPreferenceTest {
    private final InProcessMembers members = new InProcessMembers(3);
    private final ScriptedLockService first = members.service(0);
    private final ScriptedLockService third = members.service(2);
    private final TenureClient client = members.client();
    private final Lease lease = client.grantLease(Duration.ofSeconds(9), "worker-1");

    @AfterEach
    void tearDown() {
        members.close();
    }

    private void firstNamesItsLeader(String endpoint) {
        first.lockAnswer = request -> LockResponse.newBuilder().setKey(request.getName()).setAcquired(true)
                .setFencingToken(1L << 16).setHeader(ResponseHeader.newBuilder().setLeaderEndpoint(endpoint)).build();
    }

    @Test
    void callsMoveToTheLeaderTheAnsweringFollowerNames() throws Exception {
        firstNamesItsLeader(members.endpoint(2));

        LockHandle handle = client.acquire("invoices", lease, null, null);
        handle.release();

        UnlockRequest release = third.unlocks.poll(5, TimeUnit.SECONDS);
        assertThat(release).as("the release went to the leader member 0 named").isNotNull();
        assertThat(first.unlocks).isEmpty();
    }

    @Test
    void aLeaderOutsideTheClientsEndpointsMovesNothing() throws Exception {
        firstNamesItsLeader("10.9.9.9:7070");

        client.acquire("invoices", lease, null, null).release();

        assertThat(first.unlocks.poll(5, TimeUnit.SECONDS)).isNotNull();
        assertThat(third.unlocks).isEmpty();
    }

    @Test
    void theLeaderIsReadFromTheHeaderOfAnAnswerOfEveryKind() {
        ResponseHeader header = ResponseHeader.newBuilder().setLeaderEndpoint("127.0.0.1:7072").build();
        assertThat(LeaderHint.of(io.tenure.proto.v1.KvPutResponse.newBuilder().setHeader(header).build())).isEqualTo("127.0.0.1:7072");
        assertThat(LeaderHint.of(io.tenure.proto.v1.KvGetResponse.newBuilder().setHeader(header).build())).isEqualTo("127.0.0.1:7072");
        assertThat(LeaderHint.of(io.tenure.proto.v1.CounterChangeResponse.newBuilder().setHeader(header).build()))
                .isEqualTo("127.0.0.1:7072");
        assertThat(LeaderHint.of(io.tenure.proto.v1.SemaphoreAcquireResponse.newBuilder().setHeader(header).build()))
                .isEqualTo("127.0.0.1:7072");
        assertThat(LeaderHint.of(LockResponse.newBuilder().setHeader(header).build())).isEqualTo("127.0.0.1:7072");
        assertThat(LeaderHint.of(io.tenure.proto.v1.KvPutResponse.getDefaultInstance())).as("no header").isEmpty();
        assertThat(LeaderHint.of(io.tenure.proto.v1.KvEntry.newBuilder().setKey("k").build())).as("no header field").isEmpty();
        assertThat(LeaderHint.of("not a message")).isEmpty();
    }
}
