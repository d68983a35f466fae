package io.tenure.server.http;

import com.fasterxml.jackson.databind.JsonNode;
import io.tenure.server.http.HttpMember.Reply;
import io.tenure.testing.Await;
import io.tenure.testing.TenureExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import static io.tenure.server.http.HttpLockApiTest.assertError;
import static io.tenure.server.http.HttpMember.await;
import static io.tenure.server.http.HttpMember.body;
import static io.tenure.server.http.HttpMember.claim;
import static io.tenure.server.http.HttpMember.encoded;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The HTTP two-phase acquire against one real member (each test uses its own names): an acquire
 * with {@code enqueue} answered at once, granted or queued with its position, then {@code wait}
 * completing it; a wait that times out keeps the place; locks in both modes and semaphores; and
 * every bad input answered without a change.
 */
class HttpTwoPhaseAcquireTest {
    @RegisterExtension
    static final TenureExtension tenure = TenureExtension.members(1);
    static final HttpMember member = HttpMember.of(tenure::cluster);

    private static String lockPath(String lock, String action) {
        return "/v1/locks/" + encoded(lock) + "/" + action;
    }

    private static String semaphorePath(String semaphore, String action) {
        return "/v1/semaphores/" + encoded(semaphore) + "/" + action;
    }

    private static Reply enqueue(String lock, String owner, String mode) {
        return member.post(lockPath(lock, "acquire"), body("owner_id", owner, "ttl_ms", 10_000, "enqueue", true, "mode", mode));
    }

    private static String waitBody(JsonNode place, long waitMs) {
        return body("owner_id", place.get("owner_id").asText(), "lease_id", place.get("lease_id").asLong(), "wait_ms", waitMs);
    }

    private static Reply waitFor(String lock, JsonNode place, long waitMs) {
        return member.post(lockPath(lock, "wait"), waitBody(place, waitMs));
    }

    private static CompletableFuture<Reply> waitForAsync(String lock, JsonNode place, long waitMs) {
        return member.postAsync(lockPath(lock, "wait"), waitBody(place, waitMs));
    }

    private static JsonNode queued(Reply r, int position) {
        assertThat(r.status()).as(r.toString()).isEqualTo(202);
        assertThat(r.json().get("queued").asBoolean()).isTrue();
        assertThat(r.json().get("position").asInt()).as(r.toString()).isEqualTo(position);
        return r.json();
    }

    private static JsonNode granted(Reply r) {
        assertThat(r.status()).as(r.toString()).isEqualTo(200);
        return r.json();
    }

    /** A wait that ended with the place kept: 409 held naming the lease and its position. */
    private static void stillQueued(Reply r, JsonNode place, int position) {
        assertError(r, 409, "held", null);
        assertThat(r.json().get("lease_id").asLong()).isEqualTo(place.get("lease_id").asLong());
        assertThat(r.json().get("position").asInt()).isEqualTo(position);
        assertThat(r.json().get("message").asText()).contains("keeps its place (position " + position + ")", "wait again");
    }

    @Test
    void anEnqueueBehindAHolderIsQueuedAndItsWaitGetsTheGrantAfterTheRelease() throws Exception {
        JsonNode holder = granted(member.acquire("two/phase", "holder", 10_000, 0));

        JsonNode first = queued(enqueue("two/phase", "first", "write"), 1);
        JsonNode second = queued(enqueue("two/phase", "second", "write"), 2);

        assertThat(first.fieldNames()).toIterable().containsExactly(
                "lock", "owner_id", "lease_id", "queued", "position", "mode", "ttl_remaining_ms", "expires_at_ms");
        assertThat(first.get("lock").asText()).isEqualTo("two/phase");
        assertThat(first.get("owner_id").asText()).isEqualTo("first");
        assertThat(first.get("mode").asText()).isEqualTo("write");
        assertThat(first.get("ttl_remaining_ms").asLong()).isBetween(5_000L, 10_000L);
        assertThat(member.waiters("locks", "two/phase")).containsExactly("first", "second");
        assertThat(member.leasesOf("first")).containsExactly(first.get("lease_id").asLong());
        // A retried enqueue (its answer lost) gets the same place, not a second one.
        JsonNode again = queued(enqueue("two/phase", "first", "write"), 1);
        assertThat(again.get("lease_id").asLong()).isEqualTo(first.get("lease_id").asLong());
        assertThat(member.leasesOf("first")).hasSize(1);

        // A wait that times out keeps the place, and so does a look (wait_ms 0).
        stillQueued(waitFor("two/phase", first, 200), first, 1);
        stillQueued(waitFor("two/phase", second, 0), second, 2);
        assertThat(member.waiters("locks", "two/phase")).containsExactly("first", "second");
        assertThat(member.leasesOf("first")).containsExactly(first.get("lease_id").asLong());

        CompletableFuture<Reply> waiting = waitForAsync("two/phase", first, 60_000);
        assertThat(member.release(holder).status()).isEqualTo(200);
        JsonNode grant = granted(await(waiting));

        assertThat(grant.fieldNames()).toIterable().containsExactly(
                "lock", "owner_id", "lease_id", "fencing_token", "mode", "ttl_remaining_ms", "expires_at_ms");
        assertThat(grant.get("lease_id").asLong()).isEqualTo(first.get("lease_id").asLong());
        assertThat(grant.get("fencing_token").asLong()).isGreaterThan(holder.get("fencing_token").asLong());
        assertThat(member.state("locks", "two/phase").get("owner_id").asText()).isEqualTo("first");
        // Waiting again answers the same grant; the second place moved up.
        assertThat(granted(waitFor("two/phase", first, 0)).get("fencing_token").asLong()).isEqualTo(grant.get("fencing_token").asLong());
        stillQueued(waitFor("two/phase", second, 0), second, 1);

        // Granted while nobody waits: the next wait answers the grant at once.
        assertThat(member.release(grant).status()).isEqualTo(200);
        Await.until("second holds the lock", Duration.ofSeconds(30),
                () -> member.owners("locks", "two/phase", "holders").equals(List.of("second")));
        JsonNode next = granted(waitFor("two/phase", second, 0));
        assertThat(next.get("fencing_token").asLong()).isGreaterThan(grant.get("fencing_token").asLong());
        assertThat(member.release(next).status()).isEqualTo(200);

        // Released, the lease is revoked: its place is gone.
        assertError(waitFor("two/phase", second, 0), 404, "lease_not_found", "lease_id");
        assertThat(member.leasesOf("holder", "first", "second")).isEmpty();
    }

    @Test
    void waitsKeepAQueuedLeaseAliveAcrossMoreThanItsTtl() {
        JsonNode holder = granted(member.acquire("two/alive", "holder", 10_000, 0));
        JsonNode place = queued(member.post(lockPath("two/alive", "acquire"),
                body("owner_id", "patient", "ttl_ms", 2_000, "enqueue", true)), 1);
        long lease = place.get("lease_id").asLong();

        // One wait longer than the TTL (renewed every TTL/3 while it waits), then looks within each TTL.
        stillQueued(waitFor("two/alive", place, 3_000), place, 1);
        for (int i = 0; i < 2; i++) {
            Await.until("the lease's remaining TTL drops below 1.5 s", Duration.ofSeconds(10),
                    () -> member.get("/v1/leases/" + lease).json().get("ttl_remaining_ms").asLong() < 1_500);
            Reply look = waitFor("two/alive", place, 0);
            stillQueued(look, place, 1);
            assertThat(member.get("/v1/leases/" + lease).json().get("ttl_remaining_ms").asLong()).isGreaterThan(1_500);
        }

        assertThat(member.waiters("locks", "two/alive")).containsExactly("patient");
        assertThat(member.release(holder).status()).isEqualTo(200);
        JsonNode grant = granted(waitFor("two/alive", place, 30_000));
        assertThat(grant.get("fencing_token").asLong()).isGreaterThan(holder.get("fencing_token").asLong());
        assertThat(member.release(grant).status()).isEqualTo(200);
    }

    @Test
    void anEnqueueOfAFreeLockIsGrantedAtOnce() {
        JsonNode grant = granted(enqueue("two/free", "owner", "write"));

        assertThat(grant.has("queued")).isFalse();
        assertThat(grant.get("fencing_token").asLong()).isPositive();
        JsonNode again = granted(waitFor("two/free", grant, 1_000));
        assertThat(again.get("fencing_token").asLong()).isEqualTo(grant.get("fencing_token").asLong());
        assertThat(member.release(grant).status()).isEqualTo(200);
    }

    @Test
    void readersQueueBehindAWriterAndAWriterBehindTheReaders() throws Exception {
        JsonNode writer = granted(member.acquire("two/rw", "writer", 10_000, 0));
        JsonNode r1 = queued(enqueue("two/rw", "r1", "read"), 1);
        JsonNode r2 = queued(enqueue("two/rw", "r2", "read"), 2);
        assertThat(r1.get("mode").asText()).isEqualTo("read");

        assertThat(member.release(writer).status()).isEqualTo(200);
        JsonNode g1 = granted(waitFor("two/rw", r1, 30_000));
        JsonNode g2 = granted(waitFor("two/rw", r2, 30_000));

        assertThat(g1.get("mode").asText()).isEqualTo("read");
        assertThat(g2.get("mode").asText()).isEqualTo("read");
        assertThat(g1.get("fencing_token").asLong()).isGreaterThan(writer.get("fencing_token").asLong());
        assertThat(g2.get("fencing_token").asLong()).isGreaterThan(writer.get("fencing_token").asLong());

        JsonNode w2 = queued(enqueue("two/rw", "w2", "write"), 1);
        assertThat(w2.get("mode").asText()).isEqualTo("write");
        stillQueued(waitFor("two/rw", w2, 150), w2, 1);
        assertThat(member.waiters("locks", "two/rw")).containsExactly("w2");
        CompletableFuture<Reply> writing = waitForAsync("two/rw", w2, 60_000);
        assertThat(member.release(g1).status()).isEqualTo(200);
        assertThat(writing).isNotDone();
        assertThat(member.release(g2).status()).isEqualTo(200);
        JsonNode gw = granted(await(writing));
        assertThat(gw.get("mode").asText()).isEqualTo("write");
        assertThat(gw.get("fencing_token").asLong()).isGreaterThan(Math.max(g1.get("fencing_token").asLong(),
                g2.get("fencing_token").asLong()));
        assertThat(member.release(gw).status()).isEqualTo(200);
    }

    @Test
    void aSemaphoresPlacesAreKeptInStrictOrderAndCompletedByWait() throws Exception {
        JsonNode full = granted(member.post(semaphorePath("two/pool", "acquire"),
                body("owner_id", "full", "ttl_ms", 10_000, "limit", 2, "permits", 2)));
        String acquire = semaphorePath("two/pool", "acquire");
        String waitPath = semaphorePath("two/pool", "wait");

        JsonNode one = queued(member.post(acquire, body("owner_id", "one", "ttl_ms", 10_000, "limit", 2, "enqueue", true)), 1);
        JsonNode two = queued(member.post(acquire, body("owner_id", "two", "ttl_ms", 10_000, "limit", 2, "permits", 2,
                "enqueue", true)), 2);

        assertThat(one.fieldNames()).toIterable().containsExactly(
                "semaphore", "owner_id", "lease_id", "queued", "position", "permits", "ttl_remaining_ms", "expires_at_ms");
        assertThat(two.get("permits").asInt()).isEqualTo(2);
        Reply notYet = member.post(waitPath, waitBody(one, 100));
        assertError(notYet, 409, "held", null);
        assertThat(notYet.json().get("available").asInt()).isZero();
        assertThat(notYet.json().get("position").asInt()).isEqualTo(1);
        assertThat(member.waiters("semaphores", "two/pool")).containsExactly("one", "two");

        Reply released = member.post(semaphorePath("two/pool", "release"), claim(full));
        assertThat(released.status()).as(released.toString()).isEqualTo(200);
        JsonNode g1 = granted(member.post(waitPath, waitBody(one, 30_000)));
        assertThat(g1.get("permits").asInt()).isEqualTo(1);
        assertThat(g1.get("fencing_token").asLong()).isGreaterThan(full.get("fencing_token").asLong());
        // One permit free, but two needs two: it keeps its place, now first.
        Reply short1 = member.post(waitPath, waitBody(two, 100));
        assertError(short1, 409, "held", null);
        assertThat(short1.json().get("position").asInt()).isEqualTo(1);

        CompletableFuture<Reply> waiting = member.postAsync(waitPath, waitBody(two, 60_000));
        assertThat(member.post(semaphorePath("two/pool", "release"), claim(g1)).status()).isEqualTo(200);
        JsonNode g2 = granted(await(waiting));
        assertThat(g2.get("permits").asInt()).isEqualTo(2);
        assertThat(g2.get("fencing_token").asLong()).isGreaterThan(g1.get("fencing_token").asLong());
        assertThat(member.post(semaphorePath("two/pool", "release"), claim(g2)).status()).isEqualTo(200);
    }

    private static Reply cancel(String path, JsonNode place) {
        return member.post(path, body("owner_id", place.get("owner_id").asText(), "lease_id", place.get("lease_id").asLong()));
    }

    /** A cancel that withdrew the place (or found none): 200, not acquired, the waiters left. */
    private static JsonNode withdrawn(Reply r, int waiters) {
        assertThat(r.status()).as(r.toString()).isEqualTo(200);
        assertThat(r.json().get("acquired").asBoolean()).as(r.toString()).isFalse();
        assertThat(r.json().get("waiters").asInt()).as(r.toString()).isEqualTo(waiters);
        return r.json();
    }

    @Test
    void aCancelGivesUpThePlaceSoTheNextWaiterIsGrantedAndARetryAnswersTheSame() throws Exception {
        JsonNode holder = granted(member.acquire("two/cancel", "holder", 10_000, 0));
        JsonNode first = queued(enqueue("two/cancel", "first", "write"), 1);
        JsonNode second = queued(enqueue("two/cancel", "second", "write"), 2);
        CompletableFuture<Reply> firstWaits = waitForAsync("two/cancel", first, 60_000);

        JsonNode cancelled = withdrawn(cancel(lockPath("two/cancel", "cancel"), first), 1);

        assertThat(cancelled.fieldNames()).toIterable().containsExactly("lock", "owner_id", "lease_id", "acquired", "waiters");
        assertThat(cancelled.get("lease_id").asLong()).isEqualTo(first.get("lease_id").asLong());
        assertThat(member.waiters("locks", "two/cancel")).containsExactly("second");
        // The wait of the place given up ends at once, as a wait of a place withdrawn.
        assertError(await(firstWaits), 409, "not_queued", "lease_id");
        // A retry whose answer was lost is answered the same; a later wait does not queue again.
        assertThat(withdrawn(cancel(lockPath("two/cancel", "cancel"), first), 1)).isEqualTo(cancelled);
        assertError(waitFor("two/cancel", first, 0), 409, "not_queued", "lease_id");
        assertThat(member.waiters("locks", "two/cancel")).containsExactly("second");

        CompletableFuture<Reply> secondWaits = waitForAsync("two/cancel", second, 60_000);
        assertThat(member.release(holder).status()).isEqualTo(200);
        JsonNode next = granted(await(secondWaits));
        assertThat(next.get("owner_id").asText()).isEqualTo("second");
        assertThat(next.get("fencing_token").asLong()).isGreaterThan(holder.get("fencing_token").asLong());
        assertThat(member.release(next).status()).isEqualTo(200);
    }

    @Test
    void aCancelAfterTheGrantAnswersTheGrantWithItsToken() {
        JsonNode holder = granted(member.acquire("two/late-cancel", "holder", 10_000, 0));
        JsonNode place = queued(enqueue("two/late-cancel", "late", "write"), 1);
        assertThat(member.release(holder).status()).isEqualTo(200);
        Await.until("late holds the lock", Duration.ofSeconds(30),
                () -> member.owners("locks", "two/late-cancel", "holders").equals(List.of("late")));

        Reply r = cancel(lockPath("two/late-cancel", "cancel"), place);

        JsonNode grant = granted(r);
        assertThat(grant.fieldNames()).toIterable().containsExactly(
                "lock", "owner_id", "lease_id", "fencing_token", "mode", "ttl_remaining_ms", "expires_at_ms", "acquired");
        assertThat(grant.get("acquired").asBoolean()).isTrue();
        assertThat(grant.get("mode").asText()).isEqualTo("write");
        assertThat(grant.get("fencing_token").asLong()).isEqualTo(member.state("locks", "two/late-cancel").get("fencing_token").asLong())
                .isGreaterThan(holder.get("fencing_token").asLong());
        // The lease holds the lock: released with the token the cancel answered.
        assertThat(member.release(grant).status()).isEqualTo(200);
        assertThat(member.leasesOf("late")).isEmpty();
    }

    @Test
    void aCancelledWriterNoLongerHoldsBackTheReadersBehindIt() {
        JsonNode reader = granted(member.post(lockPath("two/rw-cancel", "acquire"), body("owner_id", "reader", "ttl_ms", 10_000,
                "mode", "read")));
        JsonNode writer = queued(enqueue("two/rw-cancel", "writer", "write"), 1);
        JsonNode later = queued(enqueue("two/rw-cancel", "later", "read"), 2);

        withdrawn(cancel(lockPath("two/rw-cancel", "cancel"), writer), 0);

        Await.until("the later reader shares the lock", Duration.ofSeconds(30),
                () -> member.owners("locks", "two/rw-cancel", "holders").equals(List.of("reader", "later")));
        JsonNode shared = granted(waitFor("two/rw-cancel", later, 0));
        assertThat(shared.get("mode").asText()).isEqualTo("read");
        assertThat(member.release(shared).status()).isEqualTo(200);
        assertThat(member.release(reader).status()).isEqualTo(200);
    }

    @Test
    void aSemaphoresCancelledHeadLetsTheSmallerRequestBehindItIn() {
        String acquire = semaphorePath("two/pool-cancel", "acquire");
        String cancelPath = semaphorePath("two/pool-cancel", "cancel");
        JsonNode holder = granted(member.post(acquire, body("owner_id", "holder", "ttl_ms", 10_000, "limit", 3, "permits", 2)));
        JsonNode big = queued(member.post(acquire, body("owner_id", "big", "ttl_ms", 10_000, "limit", 3, "permits", 2,
                "enqueue", true)), 1);
        JsonNode small = queued(member.post(acquire, body("owner_id", "small", "ttl_ms", 10_000, "limit", 3, "enqueue", true)), 2);

        Reply r = cancel(cancelPath, big);

        assertThat(r.status()).as(r.toString()).isEqualTo(200);
        assertThat(r.json().fieldNames()).toIterable().containsExactly(
                "semaphore", "owner_id", "lease_id", "acquired", "available", "waiters");
        assertThat(r.json().get("acquired").asBoolean()).isFalse();
        // The head needed two of the one permit free and held back the request for one behind it: no longer.
        Await.until("small holds a permit", Duration.ofSeconds(30),
                () -> member.owners("semaphores", "two/pool-cancel", "holders").equals(List.of("holder", "small")));
        assertThat(member.waiters("semaphores", "two/pool-cancel")).isEmpty();
        // Cancelled after its grant: the grant, with its token and permits.
        JsonNode grant = granted(cancel(cancelPath, small));
        assertThat(grant.get("acquired").asBoolean()).isTrue();
        assertThat(grant.get("permits").asInt()).isEqualTo(1);
        assertThat(grant.get("fencing_token").asLong()).isGreaterThan(holder.get("fencing_token").asLong());
        assertThat(member.post(semaphorePath("two/pool-cancel", "release"), claim(grant)).status()).isEqualTo(200);
        assertThat(member.post(semaphorePath("two/pool-cancel", "release"), claim(holder)).status()).isEqualTo(200);
    }

    @Test
    void aCancelsBadInputIsRefusedNamingTheFieldAndChangesNothing() {
        JsonNode holder = granted(member.acquire("two/bad-cancel", "holder", 10_000, 0));
        JsonNode place = queued(enqueue("two/bad-cancel", "placed", "write"), 1);
        String cancelPath = lockPath("two/bad-cancel", "cancel");
        long lease = place.get("lease_id").asLong();

        assertError(member.post(cancelPath, body("owner_id", "placed")), 400, "invalid_argument", "lease_id");
        assertError(member.post(cancelPath, body("owner_id", "placed", "lease_id", 0)), 400, "invalid_argument", "lease_id");
        assertError(member.post(cancelPath, body("owner_id", "placed", "lease_id", "one")), 400, "invalid_argument", "lease_id");
        assertError(member.post(cancelPath, body("lease_id", lease)), 400, "invalid_argument", "owner_id");
        assertError(member.post(cancelPath, "{"), 400, "invalid_json", null);
        assertError(member.post("/v1/locks//cancel", body("owner_id", "placed", "lease_id", lease)), 400, "invalid_argument", "lock");
        // A lease never granted, and another owner's.
        assertError(member.post(cancelPath, body("owner_id", "placed", "lease_id", 424242)), 404, "lease_not_found", "lease_id");
        assertError(member.post(semaphorePath("two/bad-cancel", "cancel"), body("owner_id", "placed", "lease_id", 424242)),
                404, "lease_not_found", "lease_id");
        Reply intruder = member.post(cancelPath, body("owner_id", "intruder", "lease_id", lease));
        assertError(intruder, 409, "not_holder", "owner_id");
        assertThat(intruder.json().get("message").asText()).contains("nothing was withdrawn from lock 'two/bad-cancel'");

        assertThat(member.waiters("locks", "two/bad-cancel")).containsExactly("placed");
        assertThat(member.leasesOf("placed")).containsExactly(lease);
        assertThat(member.release(holder).status()).isEqualTo(200);
        assertThat(member.release(granted(waitFor("two/bad-cancel", place, 30_000))).status()).isEqualTo(200);
    }

    @Test
    void everyBadInputIsRefusedNamingTheFieldAndChangesNothing() {
        JsonNode holder = granted(member.acquire("two/bad", "holder", 10_000, 0));
        JsonNode place = queued(enqueue("two/bad", "placed", "write"), 1);
        JsonNode elsewhere = granted(member.acquire("two/other", "elsewhere", 10_000, 0));
        String acquire = lockPath("two/bad", "acquire");
        String waitPath = lockPath("two/bad", "wait");
        long lease = place.get("lease_id").asLong();

        // enqueue: not a boolean; with a wait (it is answered at once).
        assertError(member.post(acquire, body("owner_id", "p", "ttl_ms", 5_000, "enqueue", "yes")), 400, "invalid_argument", "enqueue");
        Reply withWait = member.post(acquire, body("owner_id", "p", "ttl_ms", 5_000, "enqueue", true, "wait_ms", 100));
        assertError(withWait, 400, "invalid_argument", "wait_ms");
        assertThat(withWait.json().get("message").asText()).contains("/wait");
        // A retried enqueue in the other mode, or for other permits.
        assertError(enqueue("two/bad", "placed", "read"), 409, "conflict", "mode");
        // wait: its fields.
        assertError(member.post(waitPath, body("owner_id", "placed", "wait_ms", 0)), 400, "invalid_argument", "lease_id");
        assertError(member.post(waitPath, body("lease_id", lease)), 400, "invalid_argument", "owner_id");
        assertError(member.post(waitPath, body("owner_id", "placed", "lease_id", lease, "wait_ms", -1)), 400, "invalid_argument",
                "wait_ms");
        assertError(member.post(waitPath, body("owner_id", "placed", "lease_id", lease, "wait_ms", LeaseRecipe.MAX_WAIT_MS + 1)),
                400, "invalid_argument", "wait_ms");
        // wait: a lease that has ended, another owner's, one with no place in this queue.
        assertError(member.post(waitPath, body("owner_id", "placed", "lease_id", 424242)), 404, "lease_not_found", "lease_id");
        assertError(member.post(waitPath, body("owner_id", "intruder", "lease_id", lease)), 409, "not_holder", "owner_id");
        Reply notQueued = member.post(waitPath, waitBody(elsewhere, 0));
        assertError(notQueued, 409, "not_queued", "lease_id");
        assertThat(notQueued.json().get("message").asText()).contains("lease " + elsewhere.get("lease_id").asLong()
                + " neither waits for nor holds lock 'two/bad'");
        assertError(member.post(semaphorePath("two/bad-pool", "wait"), waitBody(place, 0)), 409, "not_queued", "lease_id");
        // A semaphore's enqueue retried for other permits, or with a wait.
        JsonNode full = granted(member.post(semaphorePath("two/bad-pool", "acquire"), body("owner_id", "full", "ttl_ms", 10_000,
                "limit", 3, "permits", 3)));
        queued(member.post(semaphorePath("two/bad-pool", "acquire"), body("owner_id", "sp", "ttl_ms", 10_000, "limit", 3,
                "enqueue", true)), 1);
        assertError(member.post(semaphorePath("two/bad-pool", "acquire"), body("owner_id", "sp", "ttl_ms", 10_000, "limit", 3,
                "permits", 2, "enqueue", true)), 409, "conflict", "permits");
        assertError(member.post(semaphorePath("two/bad-pool", "acquire"), body("owner_id", "sp", "ttl_ms", 10_000, "limit", 3,
                "enqueue", true, "wait_ms", 5)), 400, "invalid_argument", "wait_ms");

        assertThat(member.waiters("locks", "two/bad")).containsExactly("placed");
        assertThat(member.leasesOf("placed")).containsExactly(lease);
        Await.until("no lease is left by a refused request", Duration.ofSeconds(30), () -> member.leasesOf("p", "intruder").isEmpty());
        assertThat(member.release(holder).status()).isEqualTo(200);
        assertThat(member.release(granted(waitFor("two/bad", place, 30_000))).status()).isEqualTo(200);
        assertThat(member.release(elsewhere).status()).isEqualTo(200);
        assertThat(member.post(semaphorePath("two/bad-pool", "release"), claim(full)).status()).isEqualTo(200);
    }
}
