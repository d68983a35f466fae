package io.tenure.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tenure.client.Lease;
import io.tenure.client.LeaseLostException;
import io.tenure.client.LockDescription;
import io.tenure.client.LockHandle;
import io.tenure.client.LockNotAcquiredException;
import io.tenure.client.RetryPolicy;
import io.tenure.client.TenureClient;
import io.tenure.client.TenureLock;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The lock API of the Java client against one real member. */
class LockApiTest {
    private static final Duration TTL = Duration.ofSeconds(5);

    @RegisterExtension
    static final TenureExtension tenure = TenureExtension.members(1);

    @Test
    void describeNamesHolderTokenMetadataAndTheWaitersInGrantOrder() throws Exception {
        TenureClient client = tenure.client();
        Lease holder = client.grantLease(TTL, "holder-1");
        Lease first = client.grantLease(TTL, "waiter-1");
        Lease second = client.grantLease(TTL, "waiter-2");
        LockHandle held = client.lock("describe/a", holder).withMetadata("batch 7").acquire();
        CompletableFuture<LockHandle> firstWait = client.lock("describe/a", first).acquireAsync();
        awaitWaiters(client, "describe/a", 1);
        CompletableFuture<LockHandle> secondWait = client.lock("describe/a", second).acquireAsync();
        awaitWaiters(client, "describe/a", 2);

        LockDescription d = client.describe("describe/a");
        assertThat(d.held()).isTrue();
        assertThat(d.holder()).isEqualTo("holder-1");
        assertThat(d.leaseId()).isEqualTo(holder.id());
        assertThat(d.fencingToken()).isEqualTo(held.fencingToken());
        assertThat(new String(d.metadata(), StandardCharsets.UTF_8)).isEqualTo("batch 7");
        assertThat(d.heldSinceRevision()).isEqualTo(held.fencingToken());
        assertThat(d.grants()).isEqualTo(1);
        assertThat(d.holderTtlRemaining()).hasValueSatisfying(left -> assertThat(left).isPositive().isLessThanOrEqualTo(TTL));
        assertThat(d.waiters()).extracting(LockDescription.Waiter::clientId).containsExactly("waiter-1", "waiter-2");
        assertThat(d.waiters()).extracting(LockDescription.Waiter::leaseId).containsExactly(first.id(), second.id());
        assertThat(d.revision()).isGreaterThanOrEqualTo(d.waiters().get(1).joinedRevision());

        held.release();
        LockHandle next = firstWait.get(10, TimeUnit.SECONDS);
        assertThat(next.fencingToken()).isGreaterThan(held.fencingToken());
        LockDescription after = client.describe("describe/a");
        assertThat(after.holder()).isEqualTo("waiter-1");
        assertThat(after.grants()).isEqualTo(2);
        assertThat(after.heldSinceRevision()).isEqualTo(held.fencingToken());
        assertThat(after.waiters()).extracting(LockDescription.Waiter::clientId).containsExactly("waiter-2");
        next.release();
        secondWait.get(10, TimeUnit.SECONDS).release();

        LockDescription free = client.describe("describe/a");
        assertThat(free.held()).isFalse();
        assertThat(free.waiters()).isEmpty();
        assertThat(free.holderTtlRemaining()).isEmpty();
        List.of(holder, first, second).forEach(Lease::revoke);
    }

    @Test
    void locksListsTheHeldLocksUnderAPrefixInNameOrder() {
        TenureClient client = tenure.client();
        Lease lease = client.grantLease(TTL, "lister");
        for (String name : List.of("list/b", "list/a", "list/c", "other/x")) {
            client.lock(name, lease).acquire();
        }
        assertThat(client.locks("list/", 10)).extracting(LockDescription::key).containsExactly("list/a", "list/b", "list/c");
        assertThat(client.locks("list/", 2)).extracting(LockDescription::key).containsExactly("list/a", "list/b");
        lease.revoke();
        assertThat(client.locks("list/", 10)).isEmpty();
    }

    @Test
    void theSessionLeaseIsGrantedOnFirstUseSharedAndGrantedAnewAfterItEnds() {
        try (TenureClient client = TenureClient.builder().endpoints(tenure.endpoints()).clientId("svc-7")
                .sessionTtl(Duration.ofSeconds(3)).build()) {
            TenureLock lock = client.lock("session/a");
            LockHandle held = lock.acquire(Duration.ZERO);
            assertThat(held.lease().clientId()).isEqualTo("svc-7");
            assertThat(held.lease().ttl()).isEqualTo(Duration.ofSeconds(3));
            assertThat(client.session()).isSameAs(held.lease());
            assertThat(client.lock("session/a").acquire(Duration.ZERO).fencingToken())
                    .as("the same lease acquiring again gets the same grant").isEqualTo(held.fencingToken());
            assertThat(client.describe("session/a").holder()).isEqualTo("svc-7");

            held.lease().revoke();
            LockHandle again = lock.acquire(Duration.ZERO);
            assertThat(again.lease()).isNotSameAs(held.lease());
            assertThat(again.fencingToken()).isGreaterThan(held.fencingToken());
            assertThat(held.isValid()).isFalse();
            again.release();
        }
    }

    @Test
    void tryAcquireNeverWaitsAndAcquireWithATimeoutNamesTheHolder() {
        TenureClient client = tenure.client();
        Lease a = client.grantLease(TTL, "a");
        Lease b = client.grantLease(TTL, "b");
        LockHandle held = client.lock("try/a", a).acquire();

        assertThat(client.lock("try/a", b).tryAcquire()).isEmpty();
        assertThatThrownBy(() -> client.lock("try/a", b).acquire(Duration.ofMillis(200)))
                .isInstanceOfSatisfying(LockNotAcquiredException.class, e -> assertThat(e.getMessage()).contains("a"));
        assertThat(client.describe("try/a").waiters()).as("the timed-out wait was withdrawn").isEmpty();

        held.release();
        Optional<LockHandle> got = client.lock("try/a", b).tryAcquire();
        assertThat(got).isPresent();
        got.get().release();
        a.revoke();
        b.revoke();
    }

    @Test
    void aRetriedWaitKeepsOneQueueEntryAndReturnsTheSameGrant() throws Exception {
        TenureClient client = tenure.client();
        Lease holder = client.grantLease(TTL, "h");
        Lease waiter = client.grantLease(TTL, "w");
        LockHandle held = client.lock("retry/a", holder).acquire();
        // Two waits of the same lease, as a retry after an ambiguous failure would make.
        CompletableFuture<LockHandle> one = client.lock("retry/a", waiter).acquireAsync();
        CompletableFuture<LockHandle> two = client.lock("retry/a", waiter).acquireAsync();
        awaitWaiters(client, "retry/a", 1);
        assertThat(client.describe("retry/a").waiters()).hasSize(1);

        held.release();
        LockHandle a = one.get(10, TimeUnit.SECONDS);
        LockHandle b = two.get(10, TimeUnit.SECONDS);
        assertThat(a.fencingToken()).isEqualTo(b.fencingToken());
        a.release();
        b.release(); // the same grant, already released: a no-op
        assertThat(client.describe("retry/a").held()).isFalse();
        holder.revoke();
        waiter.revoke();
    }

    @Test
    void acquireWithRetryRetriesUntilTheHolderLetsGoAndGivesUpAfterTheLastAttempt() throws Exception {
        TenureClient client = tenure.client();
        Lease holder = client.grantLease(TTL, "h");
        Lease waiter = client.grantLease(TTL, "w");
        LockHandle held = client.lock("retry/b", holder).acquire();
        RetryPolicy three = new RetryPolicy(3, Duration.ofMillis(100), Duration.ofMillis(20), Duration.ofMillis(40));

        assertThatThrownBy(() -> client.lock("retry/b", waiter).acquireWithRetry(three))
                .isInstanceOfSatisfying(LockNotAcquiredException.class, e -> assertThat(e.getSuppressed()).hasSize(2));

        RetryPolicy patient = new RetryPolicy(50, Duration.ofMillis(100), Duration.ofMillis(20), Duration.ofMillis(40));
        CompletableFuture<LockHandle> retrying = client.lock("retry/b", waiter).acquireWithRetryAsync(patient);
        held.release();
        LockHandle got = retrying.get(30, TimeUnit.SECONDS);
        assertThat(got.fencingToken()).isGreaterThan(held.fencingToken());
        got.release();
        holder.revoke();
        waiter.revoke();
    }

    @Test
    void withLockRunsTheWorkUnderTheLockAndFreesItAfterwards() throws Exception {
        TenureClient client = tenure.client();
        long token = client.withLock("with/a", TTL, lock -> {
            assertThat(client.describe("with/a").fencingToken()).isEqualTo(lock.fencingToken());
            return lock.fencingToken();
        });
        assertThat(token).isPositive();
        assertThat(client.describe("with/a").held()).isFalse();

        assertThatThrownBy(() -> client.withLock("with/a", TTL, lock -> {
            throw new IllegalStateException("the work failed");
        })).isInstanceOf(IllegalStateException.class).hasMessage("the work failed");
        assertThat(client.describe("with/a").held()).isFalse();
        assertThat(Thread.currentThread().isInterrupted()).isFalse();

        String async = client.withLockAsync("with/a", TTL, lock -> CompletableFuture.supplyAsync(() -> "done " + lock.key()))
                .get(10, TimeUnit.SECONDS);
        assertThat(async).isEqualTo("done with/a");
    }

    @Test
    void awaitFreeWatchesBeforeItReadsAndReturnsOnceTheHolderLetsGo() throws Exception {
        TenureClient client = tenure.client();
        assertThat(client.lock("await/a").awaitFree(Duration.ZERO)).as("a free lock").isTrue();

        Lease holder = client.grantLease(TTL, "h");
        LockHandle held = client.lock("await/a", holder).acquire();
        assertThat(client.lock("await/a").awaitFree(Duration.ofMillis(300))).as("held throughout").isFalse();

        CompletableFuture<Boolean> waiting = client.lock("await/a").awaitFreeAsync(Duration.ofSeconds(30));
        // Let the watch and the read happen while the lock is held, then release.
        awaitDescribed(client, "await/a");
        held.release();
        assertThat(waiting.get(30, TimeUnit.SECONDS)).isTrue();
        holder.revoke();
    }

    @Test
    void handlesOfDifferentLeasesNeverOverlap() throws Exception {
        TenureClient client = tenure.client();
        int workers = 4;
        int rounds = 25;
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger overlaps = new AtomicInteger();
        AtomicLong lastToken = new AtomicLong();
        AtomicInteger tokensOutOfOrder = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(workers);
        List<Future<Integer>> done = new ArrayList<>();
        for (int w = 0; w < workers; w++) {
            int id = w;
            done.add(pool.submit(() -> {
                Lease lease = client.grantLease(TTL, "worker-" + id);
                TenureLock lock = client.lock("overlap/a", lease);
                for (int i = 0; i < rounds; i++) {
                    try (LockHandle held = lock.acquire()) {
                        if (inside.incrementAndGet() != 1) {
                            overlaps.incrementAndGet();
                        }
                        if (held.fencingToken() <= lastToken.getAndSet(held.fencingToken())) {
                            tokensOutOfOrder.incrementAndGet();
                        }
                        inside.decrementAndGet();
                    }
                }
                lease.revoke();
                return rounds;
            }));
        }
        int total = 0;
        for (Future<Integer> f : done) {
            total += f.get(120, TimeUnit.SECONDS);
        }
        pool.shutdown();
        assertThat(total).isEqualTo(workers * rounds);
        assertThat(overlaps).hasValue(0);
        assertThat(tokensOutOfOrder).hasValue(0);
    }

    @Test
    void aLostLeaseInterruptsTheWorkOfWithLock() throws Exception {
        // A member of its own, so that stopping it leaves the other tests alone.
        try (TenureCluster alone = TenureCluster.start(1)) {
            TenureClient client = alone.newClient();
            CompletableFuture<Void> working = new CompletableFuture<>();
            CompletableFuture<Object> result = CompletableFuture.supplyAsync(() -> {
                try {
                    return client.withLock("with/lost", Duration.ofSeconds(2), lock -> {
                        working.complete(null);
                        new CompletableFuture<Void>().get(60, TimeUnit.SECONDS); // blocks until interrupted
                        return "finished";
                    });
                } catch (Exception e) {
                    return e;
                }
            });
            working.get(30, TimeUnit.SECONDS);
            long stoppedAt = System.nanoTime();
            alone.stop(0);
            Object outcome = result.get(30, TimeUnit.SECONDS);
            long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - stoppedAt);
            assertThat(outcome).isInstanceOfSatisfying(LeaseLostException.class, e -> {
                assertThat(e.getSuppressed()).singleElement().isInstanceOf(InterruptedException.class);
            });
            // Lost a safe window (1.67 s for a 2 s lease) after the last acknowledged keep-alive,
            // so within 1.67 s of the stop, plus timer slack.
            assertThat(tookMs).isLessThan(2_500);
        }
    }

    /** Returns after one more linearizable read: whatever was started before has been applied. */
    private static void awaitDescribed(TenureClient client, String name) {
        assertThat(client.describe(name).held()).isTrue();
    }

    /**
     * The blocking calls are answered on gRPC's transport thread, one thread hand-off fewer; the
     * asynchronous ones must not be: a blocking call made from code chained on them would wait
     * for an answer that the thread it blocks is the one to read, for ever.
     */
    @Test
    void codeChainedOnAnAsynchronousCallMayMakeBlockingCalls() throws Exception {
        TenureClient client = tenure.client();
        Lease lease = client.grantLease(TTL, "chained");

        String holder = client.lock("chained/acquired", lease).acquireAsync()
                .thenApply(handle -> {
                    String seen = client.describe("chained/acquired").holder();
                    handle.release();
                    return seen;
                })
                .get(10, TimeUnit.SECONDS);
        assertThat(holder).isEqualTo("chained");

        Optional<String> tried = client.lock("chained/tried", lease).tryAcquireAsync()
                .thenApply(granted -> granted.map(handle -> {
                    handle.release();
                    return client.describe("chained/tried").held() ? "still held" : "released";
                }))
                .get(10, TimeUnit.SECONDS);
        assertThat(tried).contains("released");

        LockHandle blocking = client.lock("chained/released", lease).acquire();
        String after = blocking.releaseAsync()
                .thenApply(ignored -> client.describe("chained/released").held() ? "still held" : "released")
                .get(10, TimeUnit.SECONDS);
        assertThat(after).isEqualTo("released");
    }

    private static void awaitWaiters(TenureClient client, String name, int count) {
        Await.until(count + " waiters of " + name, Duration.ofSeconds(10), () -> client.describe(name).waiters().size() >= count);
    }
}
