package io.tenure.server.http;

import com.fasterxml.jackson.databind.JsonNode;
import io.tenure.core.kernel.LeaseView;
import io.tenure.server.http.HttpMember.Reply;
import io.tenure.testing.Await;
import io.tenure.testing.TenureExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static io.tenure.server.http.HttpLockApiTest.assertError;
import static io.tenure.server.http.HttpMember.body;
import static io.tenure.server.http.HttpMember.claim;
import static io.tenure.server.http.HttpMember.encoded;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Read and write mode over the HTTP lock API, against one real member (each test uses its own
 * lock names): readers share, a writer waits for them all, a queued writer holds back later
 * readers, a writer downgrades, an owner never switches modes by acquiring again, and describe
 * shows the mode, every holder and each waiter's mode.
 */
class HttpReadWriteLockApiTest {
    @RegisterExtension
    static final TenureExtension tenure = TenureExtension.members(1);
    static final HttpMember member = HttpMember.of(tenure::cluster);
    private static final Duration DEADLINE = Duration.ofSeconds(30);

    private static String acquirePath(String lock) {
        return "/v1/locks/" + encoded(lock) + "/acquire";
    }

    private static String acquireBody(String owner, String mode, long waitMs) {
        return body("owner_id", owner, "ttl_ms", 10_000, "wait_ms", waitMs, "mode", mode);
    }

    private static Reply acquire(String lock, String owner, String mode, long waitMs) {
        return member.post(acquirePath(lock), acquireBody(owner, mode, waitMs));
    }

    private static CompletableFuture<Reply> acquireAsync(String lock, String owner, String mode, long waitMs) {
        return member.postAsync(acquirePath(lock), acquireBody(owner, mode, waitMs));
    }

    private static JsonNode granted(Reply r, String mode) {
        assertThat(r.status()).as(r.toString()).isEqualTo(200);
        assertThat(r.json().get("mode").asText()).as(r.toString()).isEqualTo(mode);
        return r.json();
    }

    private static Reply downgrade(JsonNode grant) {
        return member.post("/v1/locks/" + encoded(grant.get("lock").asText()) + "/downgrade", claim(grant));
    }

    private static void released(JsonNode grant) {
        Reply r = member.release(grant);
        assertThat(r.status()).as(r.toString()).isEqualTo(200);
    }

    private static JsonNode lockState(String lock) {
        return member.state("locks", lock);
    }

    /** The owners holding the lock, in grant order; none when it is free. */
    private static List<String> holdersOf(String lock) {
        return member.owners("locks", lock, "holders");
    }

    private static List<String> waitersOf(String lock) {
        return member.waiters("locks", lock);
    }

    private static long leasesOf(String owner) {
        return member.server().member().stateMachine().read(s -> s.leases()).stream()
                .map(LeaseView::clientId).filter(owner::equals).count();
    }

    private static Reply await(CompletableFuture<Reply> reply) throws Exception {
        return reply.get(60, TimeUnit.SECONDS);
    }

    @Test
    void twoReadersShareAndAWriterGetsATokenAboveBothOnceBothRelease() throws Exception {
        JsonNode r1 = granted(acquire("rw/share", "reader-1", "read", 0), "read");
        JsonNode r2 = granted(acquire("rw/share", "reader-2", "read", 0), "read");
        assertThat(r2.get("fencing_token").asLong()).isGreaterThan(r1.get("fencing_token").asLong());
        assertThat(r2.get("lease_id").asLong()).isNotEqualTo(r1.get("lease_id").asLong());

        CompletableFuture<Reply> writer = acquireAsync("rw/share", "writer", "write", 30_000);
        Await.until("the writer waits", DEADLINE, () -> waitersOf("rw/share").equals(List.of("writer")));
        Reply firstOut = member.release(r1);

        assertThat(firstOut.status()).as(firstOut.toString()).isEqualTo(200);
        assertThat(firstOut.json().get("next_fencing_token").asLong()).as("a reader still holds it").isZero();
        JsonNode state = lockState("rw/share");
        assertThat(state.get("owner_id").asText()).as("the first holder now").isEqualTo("reader-2");
        assertThat(holdersOf("rw/share")).containsExactly("reader-2");
        assertThat(waitersOf("rw/share")).containsExactly("writer");

        Reply lastOut = member.release(r2);
        JsonNode w = granted(await(writer), "write");

        assertThat(w.get("fencing_token").asLong()).isGreaterThan(r2.get("fencing_token").asLong())
                .isEqualTo(lastOut.json().get("next_fencing_token").asLong());
        assertThat(lockState("rw/share").get("mode").asText()).isEqualTo("write");
        released(w);
    }

    @Test
    void aQueuedWriterHoldsBackALaterReader() throws Exception {
        JsonNode r1 = granted(acquire("rw/fair", "reader-1", "read", 0), "read");
        CompletableFuture<Reply> writer = acquireAsync("rw/fair", "writer", "write", 30_000);
        Await.until("the writer waits", DEADLINE, () -> waitersOf("rw/fair").equals(List.of("writer")));

        Reply late = acquire("rw/fair", "reader-2", "read", 0);

        assertError(late, 409, "held", null);
        assertThat(late.json().get("holder").asText()).isEqualTo("reader-1");
        assertThat(late.json().get("mode").asText()).isEqualTo("read");
        assertThat(late.json().get("waiters").asInt()).isEqualTo(1);
        assertThat(late.json().get("message").asText()).contains("read mode");
        assertThat(leasesOf("reader-2")).as("the refused acquire's lease is revoked").isZero();
        assertThat(holdersOf("rw/fair")).containsExactly("reader-1");

        // Queued, the later reader waits behind the writer, and gets the lock after it.
        CompletableFuture<Reply> reader = acquireAsync("rw/fair", "reader-2", "read", 30_000);
        Await.until("reader-2 waits behind the writer", DEADLINE, () -> waitersOf("rw/fair").equals(List.of("writer", "reader-2")));
        JsonNode w = granted(await(member.releaseAnd(r1, writer)), "write");
        assertThat(waitersOf("rw/fair")).containsExactly("reader-2");
        JsonNode r2 = granted(await(member.releaseAnd(w, reader)), "read");
        assertThat(r2.get("fencing_token").asLong()).isGreaterThan(w.get("fencing_token").asLong());
        released(r2);
    }

    @Test
    void aDowngradeKeepsTheTokenAndGrantsTheQueuedReader() throws Exception {
        JsonNode w = granted(acquire("rw/down", "writer", "write", 0), "write");
        long token = w.get("fencing_token").asLong();
        CompletableFuture<Reply> reader = acquireAsync("rw/down", "reader", "read", 30_000);
        Await.until("the reader waits", DEADLINE, () -> waitersOf("rw/down").equals(List.of("reader")));

        Reply down = downgrade(w);

        assertThat(down.status()).as(down.toString()).isEqualTo(200);
        assertThat(down.json().fieldNames()).toIterable().containsExactly("lock", "fencing_token", "readers_granted", "mode");
        assertThat(down.json().get("lock").asText()).isEqualTo("rw/down");
        assertThat(down.json().get("fencing_token").asLong()).isEqualTo(token);
        assertThat(down.json().get("readers_granted").asInt()).isEqualTo(1);
        assertThat(down.json().get("mode").asText()).isEqualTo("read");
        JsonNode r = granted(await(reader), "read");
        assertThat(r.get("fencing_token").asLong()).isGreaterThan(token);
        JsonNode state = lockState("rw/down");
        assertThat(state.get("mode").asText()).isEqualTo("read");
        assertThat(holdersOf("rw/down")).containsExactly("writer", "reader");
        assertThat(state.get("fencing_token").asLong()).as("the first holder keeps its token").isEqualTo(token);

        // A retried downgrade answers again, granting nobody more.
        Reply again = downgrade(w);
        assertThat(again.status()).as(again.toString()).isEqualTo(200);
        assertThat(again.json().get("fencing_token").asLong()).isEqualTo(token);
        assertThat(again.json().get("readers_granted").asInt()).isZero();

        // Renew works for both read holders, and says the mode they hold it in.
        for (JsonNode holder : List.of(w, r)) {
            Reply renewed = member.renew(holder);
            assertThat(renewed.status()).as(renewed.toString()).isEqualTo(200);
            assertThat(renewed.json().get("mode").asText()).isEqualTo("read");
            assertThat(renewed.json().get("fencing_token").asLong()).isEqualTo(holder.get("fencing_token").asLong());
        }

        released(w);
        assertThat(holdersOf("rw/down")).containsExactly("reader");
        assertThat(leasesOf("writer")).as("the released reader's lease is revoked").isZero();
        released(r);
        assertError(member.get("/v1/locks/rw%2Fdown"), 404, "not_found", null);
    }

    @Test
    void aDowngradeIsRefusedAsAReleaseIsAndChangesNothing() {
        JsonNode w = granted(acquire("rw/down-refused", "writer", "write", 0), "write");
        long lease = w.get("lease_id").asLong();
        long token = w.get("fencing_token").asLong();
        String path = "/v1/locks/rw%2Fdown-refused/downgrade";

        Reply staleToken = member.post(path, body("owner_id", "writer", "lease_id", lease, "fencing_token", token + 1));
        Reply otherOwner = member.post(path, body("owner_id", "mallory", "lease_id", lease, "fencing_token", token));
        Reply otherLock = member.post("/v1/locks/rw%2Felsewhere/downgrade",
                body("owner_id", "writer", "lease_id", lease, "fencing_token", token));
        Reply noToken = member.post(path, body("owner_id", "writer", "lease_id", lease));

        assertError(staleToken, 409, "stale", null);
        assertThat(staleToken.json().get("message").asText()).contains("stale");
        assertError(otherOwner, 409, "stale", "owner_id");
        assertError(otherLock, 409, "stale", null);
        assertError(noToken, 400, "invalid_argument", "fencing_token");
        // Semaphores have no modes, so no downgrade.
        assertError(member.post("/v1/semaphores/rw%2Fdown-refused/downgrade", claim(w)), 404, "unknown_route", null);
        JsonNode state = lockState("rw/down-refused");
        assertThat(state.get("mode").asText()).isEqualTo("write");
        assertThat(state.get("fencing_token").asLong()).isEqualTo(token);

        released(w);
        // The lease is revoked with the release: a downgrade by it now is as a late release.
        Reply ended = downgrade(w);
        assertError(ended, 409, "stale", "lease_id");
        assertThat(ended.json().get("message").asText()).contains("has ended").contains("downgrade");
    }

    @Test
    void anOwnerHoldingInOneModeIsRefusedTheOtherAndAnsweredAgainInTheSame() {
        JsonNode r1 = granted(acquire("rw/modes", "reader-1", "read", 0), "read");
        JsonNode r2 = granted(acquire("rw/modes", "reader-2", "read", 0), "read");

        Reply upgrade = acquire("rw/modes", "reader-2", "write", 0);
        Reply retry = acquire("rw/modes", "reader-2", "read", 0);

        assertError(upgrade, 409, "conflict", "mode");
        assertThat(upgrade.json().get("message").asText()).contains("'reader-2' holds lock 'rw/modes' in read mode")
                .contains("cannot upgrade");
        // reader-2 is the second holder: the retry finds it among every holder.
        granted(retry, "read");
        assertThat(retry.json().get("lease_id").asLong()).isEqualTo(r2.get("lease_id").asLong());
        assertThat(retry.json().get("fencing_token").asLong()).isEqualTo(r2.get("fencing_token").asLong());
        assertThat(leasesOf("reader-2")).isEqualTo(1);
        assertThat(holdersOf("rw/modes")).containsExactly("reader-1", "reader-2");

        JsonNode w = granted(acquire("rw/modes-w", "writer", "write", 0), "write");
        Reply readToo = acquire("rw/modes-w", "writer", "read", 0);
        Reply writeAgain = acquire("rw/modes-w", "writer", "write", 0);

        assertError(readToo, 409, "conflict", "mode");
        assertThat(readToo.json().get("message").asText()).contains("in write mode").contains("downgrade");
        assertThat(granted(writeAgain, "write").get("fencing_token").asLong()).isEqualTo(w.get("fencing_token").asLong());
        assertThat(leasesOf("writer")).isEqualTo(1);
        assertThat(lockState("rw/modes-w").get("mode").asText()).isEqualTo("write");

        released(r1);
        released(r2);
        released(w);
    }

    @Test
    void aModeOtherThanReadOrWriteIs400NamingModeAndTheDefaultIsWrite() {
        String path = acquirePath("rw/bad-mode");

        for (Object mode : List.<Object>of("exclusive", "READ", "", 1, true)) {
            Reply r = member.post(path, body("owner_id", "prober", "ttl_ms", 10_000, "mode", mode));
            assertError(r, 400, "invalid_argument", "mode");
            assertThat(r.json().get("message").asText()).contains("\"read\" or \"write\"");
        }
        assertThat(leasesOf("prober")).as("no lease was granted for a bad mode").isZero();
        assertError(member.get("/v1/locks/rw%2Fbad-mode"), 404, "not_found", null);

        JsonNode byDefault = granted(member.post(path, body("owner_id", "prober", "ttl_ms", 10_000)), "write");
        assertThat(lockState("rw/bad-mode").get("mode").asText()).isEqualTo("write");
        released(byDefault);
    }

    @Test
    void describeAndListShowTheModeEveryHolderAndEachWaitersMode() throws Exception {
        JsonNode r1 = granted(member.post(acquirePath("rw/view"),
                body("owner_id", "reader-1", "ttl_ms", 10_000, "mode", "read", "metadata", "first")), "read");
        JsonNode r2 = granted(member.post(acquirePath("rw/view"),
                body("owner_id", "reader-2", "ttl_ms", 20_000, "mode", "read", "metadata", "second")), "read");
        CompletableFuture<Reply> writer = acquireAsync("rw/view", "writer", "write", 30_000);
        Await.until("the writer waits", DEADLINE, () -> waitersOf("rw/view").equals(List.of("writer")));
        CompletableFuture<Reply> reader = acquireAsync("rw/view", "reader-3", "read", 30_000);
        Await.until("reader-3 waits behind the writer", DEADLINE, () -> waitersOf("rw/view").equals(List.of("writer", "reader-3")));

        JsonNode state = lockState("rw/view");

        assertThat(state.fieldNames()).toIterable().containsExactly("lock", "mode", "owner_id", "lease_id", "fencing_token",
                "metadata", "create_revision", "version", "ttl_remaining_ms", "expires_at_ms", "holders", "waiters", "revision");
        assertThat(state.get("mode").asText()).isEqualTo("read");
        // The fields every client knew are the first holder's.
        assertThat(state.get("owner_id").asText()).isEqualTo("reader-1");
        assertThat(state.get("lease_id").asLong()).isEqualTo(r1.get("lease_id").asLong());
        assertThat(state.get("fencing_token").asLong()).isEqualTo(r1.get("fencing_token").asLong());
        assertThat(state.get("metadata").asText()).isEqualTo("first");
        assertThat(state.get("version").asLong()).isEqualTo(2);
        JsonNode holders = state.get("holders");
        assertThat(holders).hasSize(2);
        for (JsonNode holder : holders) {
            assertThat(holder.fieldNames()).toIterable().containsExactly("lease_id", "owner_id", "fencing_token", "metadata",
                    "ttl_remaining_ms");
        }
        int i = 0;
        for (JsonNode grant : List.of(r1, r2)) {
            JsonNode holder = holders.get(i++);
            assertThat(holder.get("lease_id").asLong()).isEqualTo(grant.get("lease_id").asLong());
            assertThat(holder.get("owner_id").asText()).isEqualTo(grant.get("owner_id").asText());
            assertThat(holder.get("fencing_token").asLong()).isEqualTo(grant.get("fencing_token").asLong());
        }
        assertThat(holders.get(1).get("metadata").asText()).isEqualTo("second");
        assertThat(holders.get(0).get("ttl_remaining_ms").asLong()).isBetween(1L, 10_000L);
        assertThat(holders.get(1).get("ttl_remaining_ms").asLong()).isBetween(10_001L, 20_000L);
        JsonNode waiters = state.get("waiters");
        assertThat(waiters.get(0).fieldNames()).toIterable().containsExactly("lease_id", "owner_id", "joined_revision", "mode");
        assertThat(waiters.get(0).get("mode").asText()).isEqualTo("write");
        assertThat(waiters.get(1).get("owner_id").asText()).isEqualTo("reader-3");
        assertThat(waiters.get(1).get("mode").asText()).isEqualTo("read");

        JsonNode listed = member.get("/v1/locks?prefix=" + encoded("rw/view")).json().get("locks");
        assertThat(listed).hasSize(1);
        assertThat(listed.get(0).get("mode").asText()).isEqualTo("read");
        assertThat(listed.get(0).get("holders")).hasSize(2);
        assertThat(listed.get(0).get("waiters").get(1).get("mode").asText()).isEqualTo("read");

        released(r1);
        JsonNode w = granted(await(member.releaseAnd(r2, writer)), "write");
        JsonNode held = lockState("rw/view");
        assertThat(held.get("mode").asText()).isEqualTo("write");
        assertThat(held.get("holders")).hasSize(1);
        assertThat(held.get("holders").get(0).get("owner_id").asText()).isEqualTo("writer");
        JsonNode r3 = granted(await(member.releaseAnd(w, reader)), "read");
        released(r3);
    }
}
