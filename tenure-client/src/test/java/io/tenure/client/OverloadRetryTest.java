package io.tenure.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * What the SDK does when a member sheds a request because it is behind (RESOURCE_EXHAUSTED with
 * the {@code tenure-retry-after-ms} trailer): retry after one to two times the
 * hint, on the next member (the client's preference stays), within the request timeout; and how grants asked for together travel in batches.
 */
class OverloadRetryTest {
    private final InProcessMembers members = new InProcessMembers(2);
    private final ScriptedLockService first = members.service(0);

    @AfterEach
    void close() {
        members.close();
    }

    @Test
    void aShedGrantIsRetriedAfterItsHintWithJitterOnTheNextMember() throws Exception {
        TenureClient client = members.client();
        ScriptedLockService second = members.service(1);
        first.shedGrants.set(1);
        second.shedGrants.set(1);
        first.shedHintMs = 100;
        second.shedHintMs = 100;

        CompletableFuture<Lease> grant = client.grantLeaseAsync(Duration.ofSeconds(9), "w");
        assertThat(first.grants).hasSize(1);
        members.time.advance(Duration.ofMillis(99));
        assertThat(second.grants).as("no retry before the hint").isEmpty();
        members.time.advance(Duration.ofMillis(101)); // at most twice the hint
        assertThat(second.grants).as("retried within twice the hint, on the next member").hasSize(1);
        members.time.advance(Duration.ofMillis(200));

        assertThat(grant).isCompleted();
        assertThat(first.grants).as("the third attempt back on the first member").hasSize(2);
        List<Long> ids = java.util.stream.Stream.concat(first.grants.stream(), second.grants.stream()).map(g -> g.getId()).distinct().toList();
        assertThat(ids).as("the same lease asked for each time").containsExactly(grant.join().id());
        client.grantLease(Duration.ofSeconds(9), "next");
        List<io.tenure.proto.v1.LeaseGrantRequest> atFirst = List.copyOf(first.grants);
        assertThat(atFirst.get(atFirst.size() - 1).getClientId()).as("the preference did not move: the next call goes to the first member")
                .isEqualTo("next");
    }

    @Test
    void resourceExhaustedWithoutAHintIsALimitAndNotRetried() {
        TenureClient client = members.client();
        first.shedGrants.set(1);
        first.shedHintMs = -1;

        assertThatThrownBy(() -> client.grantLease(Duration.ofSeconds(9), "w")).isInstanceOf(LimitExceededException.class);
        assertThat(first.grants).hasSize(1);
    }

    @Test
    void aGrantShedUntilItsTimeIsUpEndsWithTheMembersWordsAndNoLaterAttempt() {
        TenureClient client = members.client(Duration.ofSeconds(2));
        first.shedGrants.set(Integer.MAX_VALUE);
        first.shedHintMs = 300;

        members.service(1).shedGrants.set(Integer.MAX_VALUE);
        members.service(1).shedHintMs = 300;
        CompletableFuture<Lease> grant = client.grantLeaseAsync(Duration.ofSeconds(9), "w");
        members.time.advance(Duration.ofSeconds(3));

        assertThat(grant).isCompletedExceptionally();
        assertThatThrownBy(grant::join).isInstanceOf(CompletionException.class).hasCauseInstanceOf(LimitExceededException.class)
                .hasMessageContaining("this member is behind");
        int attempts = first.grants.size() + members.service(1).grants.size();
        assertThat(attempts).as("between 300 and 600 ms apart within 2 s").isBetween(3, 7);
        members.time.advance(Duration.ofSeconds(5));
        assertThat(first.grants.size() + members.service(1).grants.size()).isEqualTo(attempts);
    }

    @Test
    void aCallShedAtLastAfterAnAttemptWithoutAnAnswerEndsAsUnknownNotAsNotDone() {
        TenureClient client = members.client(Duration.ofSeconds(2));
        first.grantFailure = io.grpc.Status.UNAVAILABLE.withDescription("the connection broke before the answer");
        members.service(1).shedGrants.set(Integer.MAX_VALUE);
        members.service(1).shedHintMs = 300;

        CompletableFuture<Lease> grant = client.grantLeaseAsync(Duration.ofSeconds(9), "w");
        // The first attempt ends without an answer, the second (at once, on the next member) is shed;
        // from then on both members shed, so the call's last attempt is a shed one.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (members.service(1).grants.isEmpty() && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        assertThat(members.service(1).grants).as("the member that sheds was tried").isNotEmpty();
        first.shedHintMs = 300;
        first.shedGrants.set(Integer.MAX_VALUE);
        first.grantFailure = null;
        members.time.advance(Duration.ofSeconds(3));

        assertThat(grant).isCompletedExceptionally();
        assertThatThrownBy(grant::join).isInstanceOf(CompletionException.class).hasCauseInstanceOf(UnavailableException.class)
                .hasMessageContaining("may have been applied");
        assertThat(first.grants).as("the first attempt, then shed ones").hasSizeGreaterThan(1);
    }

    @Test
    void grantsAskedForWhileTwoCallsAreOutTravelInOneBatchEachAnsweredOnItsOwn() throws Exception {
        TenureClient client = members.client();
        // Two grants go out alone; their answers are held by the member, so the next wait.
        first.holdGrants = true;
        List<CompletableFuture<Lease>> grants = new ArrayList<>();
        for (int i = 0; i < 12; i++) {
            grants.add(client.grantLeaseAsync(Duration.ofMillis(i == 5 ? 1_234 : 9_000), "w"));
        }
        assertThat(first.grants).as("two alone, ten waiting").hasSize(2);
        assertThat(first.grantBatches).hasValue(0);

        first.holdGrants = false;
        first.releaseHeldGrants();

        assertThat(first.grantBatches).as("the ten that waited, in one call").hasValue(1);
        assertThat(first.grants).hasSize(12);
        Set<Long> ids = new HashSet<>();
        for (int i = 0; i < grants.size(); i++) {
            if (i == 5) {
                assertThatThrownBy(grants.get(i)::join).hasCauseInstanceOf(InvalidArgumentException.class)
                        .hasMessageContaining("ttl 1234 ms is refused here");
            } else {
                ids.add(grants.get(i).get(1, TimeUnit.SECONDS).id());
            }
        }
        assertThat(ids).as("each granted its own lease").hasSize(11);
    }

    @Test
    void aMemberThatDoesNotKnowBatchesGetsTheGrantsOneByOne() throws Exception {
        TenureClient client = members.client();
        first.holdGrants = true;
        first.batchUnimplemented = true;
        List<CompletableFuture<Lease>> grants = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            grants.add(client.grantLeaseAsync(Duration.ofSeconds(9), "w"));
        }

        first.holdGrants = false;
        first.releaseHeldGrants();

        assertThat(first.grantBatches).hasValue(1);
        assertThat(first.grants).as("two, then the four that waited, alone").hasSize(6);
        for (CompletableFuture<Lease> grant : grants) {
            assertThat(grant.get(1, TimeUnit.SECONDS).isValid()).isTrue();
        }
    }
}
