package io.tenure.it;

import io.tenure.proto.v1.LeaseGrantRequest;
import io.tenure.proto.v1.LeaseTimeToLiveRequest;
import io.tenure.proto.v1.LeaseTimeToLiveResponse;
import io.tenure.proto.v1.LockRequest;
import io.tenure.proto.v1.LockResponse;
import io.tenure.proto.v1.TryLockRequest;
import io.tenure.proto.v1.TryLockResponse;
import io.tenure.proto.v1.UnlockRequest;
import io.tenure.testing.MemberProcess;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** I9 on one member: what was acknowledged survives kill -9, and tokens keep increasing (I2). */
@ExtendWith(ItLogs.class)
class CrashTest {
    @TempDir
    Path work;

    @Test
    void acknowledgedLocksAndLeasesSurviveKillNineAndTokensKeepIncreasing() throws Exception {
        Path data = work.resolve("data");
        long holder;
        long other;
        Map<String, Long> tokens = new HashMap<>();
        long maxToken = 0;
        try (MemberProcess server = ItLogs.single(data).start()) {
            holder = server.blocking().leaseGrant(LeaseGrantRequest.newBuilder().setClientId("holder").setTtl(120).build()).getId();
            other = server.blocking().leaseGrant(LeaseGrantRequest.newBuilder().setClientId("other").setTtl(120).build()).getId();
            for (int i = 0; i < 100; i++) {
                String key = "crash/" + i;
                LockResponse r = server.blocking().lock(LockRequest.newBuilder().setName(key).setLeaseId(holder).build());
                assertThat(r.getAcquired()).isTrue();
                tokens.put(key, r.getFencingToken());
                maxToken = Math.max(maxToken, r.getFencingToken());
            }
            // Some hand-offs too, so released and re-granted tokens are covered.
            for (int i = 0; i < 10; i++) {
                LockResponse r = server.blocking().lock(LockRequest.newBuilder().setName("cycled").setLeaseId(other).build());
                server.blocking().unlock(UnlockRequest.newBuilder().setKey("cycled").setLeaseId(other).setFencingToken(r.getFencingToken()).build());
                maxToken = Math.max(maxToken, r.getFencingToken());
            }
            server.kill9();
        }

        try (MemberProcess restarted = ItLogs.single(data).start()) {
            for (Map.Entry<String, Long> held : tokens.entrySet()) {
                TryLockResponse again = restarted.blocking().tryLock(TryLockRequest.newBuilder()
                        .setName(held.getKey()).setLeaseId(holder).build());
                assertThat(again.getAcquired()).as(held.getKey() + " still held by its lease").isTrue();
                assertThat(again.getFencingToken()).as(held.getKey() + " keeps its token").isEqualTo(held.getValue());
                TryLockResponse stranger = restarted.blocking().tryLock(TryLockRequest.newBuilder()
                        .setName(held.getKey()).setLeaseId(other).build());
                assertThat(stranger.getAcquired()).isFalse();
            }
            LeaseTimeToLiveResponse ttl = restarted.blocking().leaseTimeToLive(LeaseTimeToLiveRequest.newBuilder().setId(holder).setKeys(true).build());
            assertThat(ttl.getTtl()).as("the holder's lease is alive").isPositive();
            assertThat(ttl.getKeysCount()).isEqualTo(100);

            LockResponse next = restarted.blocking().lock(LockRequest.newBuilder().setName("after-crash").setLeaseId(other).build());
            assertThat(next.getFencingToken()).as("the first token after the crash").isGreaterThan(maxToken);
        }
    }
}
