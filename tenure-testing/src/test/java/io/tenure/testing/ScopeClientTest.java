package io.tenure.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tenure.client.DeadlockException;
import io.tenure.client.Lease;
import io.tenure.client.LockDescription;
import io.tenure.client.LockHandle;
import io.tenure.client.LockMode;
import io.tenure.client.LockNotAcquiredException;
import io.tenure.client.Scope;
import io.tenure.client.ScopeBlocker;
import io.tenure.client.ScopeDescription;
import io.tenure.client.ScopeHandle;
import io.tenure.client.ScopeMode;
import io.tenure.client.ScopeNotAcquiredException;
import io.tenure.client.ScopePart;
import io.tenure.client.TenureClient;
import io.tenure.client.TenureException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Lock scopes through the Java client ({@code lock(Scope, ScopeMode)}, {@code tryLock},
 * {@code lockAll}, {@code describe(Scope)}, {@code blockers}) against one real member. Each test
 * uses inodes and paths of its own, and a client per worker: a scope belongs to a lease, and two
 * workers sharing one client's session lease would be one holder.
 */
class ScopeClientTest {
    private static final Duration TTL = Duration.ofSeconds(5);
    private static final Duration LIMIT = Duration.ofSeconds(10);

    @RegisterExtension
    static final TenureExtension tenure = TenureExtension.members(1);

    /** A client of its own: its own session lease, so its own holder. */
    private static TenureClient worker() {
        return tenure.cluster().newClient();
    }

    @Test
    void anExclusiveRangeBlocksAnOverlappingOneUntilReleasedAndTheNextGrantHasAHigherToken() throws Exception {
        TenureClient a = worker();
        TenureClient b = worker();
        ScopeHandle first = a.lock(Scope.byteRange(100, 0, 4096), ScopeMode.EXCLUSIVE);
        assertThat(first.parts()).containsExactly(ScopePart.exclusive(Scope.byteRange(100, 0, 4096)));
        assertThat(first.lease().id()).isEqualTo(a.session().id());

        CompletableFuture<ScopeHandle> second = b.lockAsync(Scope.byteRange(100, 100, 200), ScopeMode.EXCLUSIVE);
        awaitWaiters(Scope.byteRange(100, 0, 4096), 1);
        ScopeDescription waiting = a.describe(Scope.byteRange(100, 0, 4096));
        assertThat(waiting.holders()).singleElement().satisfies(h -> {
            assertThat(h.leaseId()).isEqualTo(a.session().id());
            assertThat(h.fencingToken()).isEqualTo(first.fencingToken());
            assertThat(h.parts()).isEqualTo(first.parts());
        });
        assertThat(waiting.waiters()).singleElement().satisfies(w -> {
            assertThat(w.leaseId()).isEqualTo(b.session().id());
            assertThat(w.parts()).containsExactly(ScopePart.exclusive(Scope.byteRange(100, 100, 200)));
        });
        assertThat(second).as("waits while the overlapping range is held").isNotDone();

        first.release();
        ScopeHandle granted = second.get(LIMIT.toSeconds(), TimeUnit.SECONDS);
        assertThat(granted.fencingToken()).as("a later grant of an overlapping scope").isGreaterThan(first.fencingToken());
        assertThat(first.isValid()).isFalse();
        assertThat(granted.isValid()).isTrue();
        granted.release();
        granted.release(); // idempotent
        assertThat(a.describe(Scope.inode(100)).holders()).as("everything of inode 100 released").isEmpty();
    }

    @Test
    void sharedRangesCoexistAndAWriterOverlappingThemIsToldWhoHoldsThem() {
        TenureClient client = tenure.client();
        Lease r1 = client.grantLease(TTL, "reader-1");
        Lease r2 = client.grantLease(TTL, "reader-2");
        Lease w = client.grantLease(TTL, "writer");
        ScopeHandle one = client.lockAll(List.of(ScopePart.shared(Scope.byteRange(101, 0, 100))), r1, Duration.ZERO, null);
        ScopeHandle two = client.lockAll(List.of(ScopePart.shared(Scope.byteRange(101, 50, 150))), r2, Duration.ZERO, null);
        assertThat(two.fencingToken()).isGreaterThan(one.fencingToken());
        assertThat(client.describe(Scope.byteRange(101, 60, 70)).holders()).extracting(ScopeDescription.Holder::clientId)
                .containsExactly("reader-1", "reader-2");

        assertThatThrownBy(() -> client.lockAll(List.of(ScopePart.exclusive(Scope.byteRange(101, 60, 70))), w, Duration.ZERO, null))
                .isInstanceOfSatisfying(ScopeNotAcquiredException.class, e -> {
                    assertThat(e.blockers()).extracting(ScopeBlocker::leaseId).containsExactlyInAnyOrder(r1.id(), r2.id());
                    assertThat(e.blockers()).allMatch(ScopeBlocker::holding);
                    assertThat(e.blockers()).extracting(ScopeBlocker::fencingToken)
                            .containsExactlyInAnyOrder(one.fencingToken(), two.fencingToken());
                    assertThat(e.getMessage()).contains("range 101:60-70 exclusive", "'reader-1' (lease " + r1.id() + ") holds");
                    assertThat(e.holder()).isIn("reader-1", "reader-2");
                })
                .isInstanceOf(LockNotAcquiredException.class);
        ScopeHandle beside = client.lockAll(List.of(ScopePart.exclusive(Scope.byteRange(101, 150, 200))), w, Duration.ZERO, null);
        assertThat(beside.fencingToken()).as("a writer beside the readers, sharing no byte").isGreaterThan(two.fencingToken());
        List.of(one, two, beside).forEach(ScopeHandle::release);
        List.of(r1, r2, w).forEach(Lease::revoke);
    }

    @Test
    void aWriterIsNotBlockedByAWaitingWriterItDoesNotOverlapButReadersDoNotPassOneTheyOverlap() throws Exception {
        TenureClient client = tenure.client();
        Lease holder = client.grantLease(TTL, "holder");
        Lease queued = client.grantLease(TTL, "queued");
        Lease other = client.grantLease(TTL, "other");
        Lease reader = client.grantLease(TTL, "reader");
        ScopeHandle held = client.lockAll(List.of(ScopePart.exclusive(Scope.byteRange(102, 0, 100))), holder, null, null);
        CompletableFuture<ScopeHandle> waiting = client.lockAllAsync(List.of(ScopePart.exclusive(Scope.byteRange(102, 0, 300))),
                queued, null, null);
        awaitWaiters(Scope.inode(102), 1);

        // [400, 500) overlaps neither the holder nor the waiter: granted at once, no head-of-line blocking.
        ScopeHandle free = client.lockAll(List.of(ScopePart.exclusive(Scope.byteRange(102, 400, 500))), other, Duration.ZERO, null);
        assertThat(waiting).isNotDone();

        // A reader of [200, 210) conflicts with no holder, only with the writer waiting ahead: it does not pass it.
        assertThatThrownBy(() -> client.lockAll(List.of(ScopePart.shared(Scope.byteRange(102, 200, 210))), reader, Duration.ZERO, null))
                .isInstanceOfSatisfying(ScopeNotAcquiredException.class, e -> assertThat(e.blockers()).singleElement().satisfies(b -> {
                    assertThat(b.leaseId()).isEqualTo(queued.id());
                    assertThat(b.holding()).isFalse();
                    assertThat(b.part()).isEqualTo(ScopePart.exclusive(Scope.byteRange(102, 0, 300)));
                }));
        assertThat(client.blockers(List.of(ScopePart.shared(Scope.byteRange(102, 200, 210)))))
                .extracting(ScopeBlocker::leaseId).containsExactly(queued.id());

        held.release();
        ScopeHandle next = waiting.get(LIMIT.toSeconds(), TimeUnit.SECONDS);
        assertThat(next.fencingToken()).isGreaterThan(free.fencingToken());
        next.release();
        free.release();
        List.of(holder, queued, other, reader).forEach(Lease::revoke);
    }

    @Test
    void aSetIsGrantedAllOrNothingUnderOneToken() throws Exception {
        TenureClient a = worker();
        TenureClient b = worker();
        TenureClient c = worker();
        List<ScopePart> set = List.of(ScopePart.exclusive(Scope.path("/scope-test/all/out")),
                ScopePart.shared(Scope.path("/scope-test/all/in")), ScopePart.exclusive(Scope.byteRange(103, 5, 15)));
        ScopeHandle blocking = a.lock(Scope.byteRange(103, 0, 10), ScopeMode.EXCLUSIVE);

        assertThatThrownBy(() -> b.tryLockAll(set, Duration.ZERO)).isInstanceOf(ScopeNotAcquiredException.class);
        assertThat(c.describe(Scope.path("/scope-test/all")).holders()).as("no part held while another is not free").isEmpty();

        CompletableFuture<ScopeHandle> waiting = b.lockAllAsync(set);
        awaitWaiters(Scope.path("/scope-test/all"), 1);
        assertThat(c.describe(Scope.path("/scope-test/all/out")).waiters()).singleElement()
                .satisfies(w -> assertThat(w.parts()).as("the set waits whole").isEqualTo(set));
        // A path whose only conflict is the waiting set does not pass it.
        assertThatThrownBy(() -> c.tryLock(Scope.path("/scope-test/all/out/file"), ScopeMode.EXCLUSIVE, Duration.ZERO))
                .isInstanceOfSatisfying(ScopeNotAcquiredException.class,
                        e -> assertThat(e.blockers()).extracting(ScopeBlocker::leaseId).containsExactly(b.session().id()));
        // Readers of the part b reads are not in its way.
        try (ScopeHandle reading = c.tryLock(Scope.path("/scope-test/all/in"), ScopeMode.SHARED, Duration.ZERO)) {
            assertThat(reading.fencingToken()).isPositive();
        }

        blocking.release();
        ScopeHandle all = waiting.get(LIMIT.toSeconds(), TimeUnit.SECONDS);
        assertThat(all.parts()).isEqualTo(set);
        // The token's writable scopes are the exclusive parts: storage refuses a write under the shared one.
        io.tenure.client.fence.InMemoryScopeFenceGuard store = io.tenure.client.fence.InMemoryScopeFenceGuard.lenient();
        store.check(all.scopedToken(), Scope.byteRange(103, 6, 8));
        store.check(all.scopedToken(), Scope.path("/scope-test/all/out/x"));
        assertThatThrownBy(() -> store.check(all.scopedToken(), Scope.path("/scope-test/all/in")))
                .isInstanceOf(io.tenure.client.fence.LockScopeMismatchException.class);
        assertThatThrownBy(() -> store.check(new io.tenure.client.fence.ScopedToken(blocking.fencingToken(),
                List.of(Scope.byteRange(103, 0, 10))), Scope.byteRange(103, 7, 9)))
                .as("the older holder of [0,10) is stale where the set wrote").isInstanceOf(io.tenure.client.fence.StaleTokenException.class);
        for (Scope part : List.of(Scope.path("/scope-test/all/out"), Scope.path("/scope-test/all/in"), Scope.inode(103))) {
            assertThat(c.describe(part).holders()).as("every part held under the one token: " + part).singleElement()
                    .satisfies(h -> {
                        assertThat(h.fencingToken()).isEqualTo(all.fencingToken());
                        assertThat(h.parts()).isEqualTo(set);
                    });
        }
        all.release();
        assertThat(c.describe(Scope.path("/")).holders()).extracting(ScopeDescription.Holder::leaseId)
                .doesNotContain(b.session().id());
        assertThat(c.describe(Scope.inode(103)).holders()).isEmpty();
    }

    @Test
    void aTimedOutOrInterruptedWaitLeavesNothingQueued() throws Exception {
        TenureClient a = worker();
        TenureClient b = worker();
        ScopeHandle held = a.lock(Scope.path("/scope-test/timeout"), ScopeMode.EXCLUSIVE);

        assertThatThrownBy(() -> b.tryLock(Scope.path("/scope-test/timeout/x"), ScopeMode.SHARED, Duration.ofMillis(200)))
                .isInstanceOfSatisfying(ScopeNotAcquiredException.class, e -> {
                    assertThat(e.blockers()).singleElement().satisfies(blocker -> {
                        assertThat(blocker.leaseId()).isEqualTo(a.session().id());
                        assertThat(blocker.holding()).isTrue();
                        assertThat(blocker.fencingToken()).isEqualTo(held.fencingToken());
                        assertThat(blocker.part()).isEqualTo(ScopePart.exclusive(Scope.path("/scope-test/timeout")));
                    });
                    assertThat(e.parts()).containsExactly(ScopePart.shared(Scope.path("/scope-test/timeout/x")));
                });
        assertThat(a.describe(Scope.path("/scope-test/timeout")).waiters()).as("withdrawn on the server").isEmpty();

        // A blocking lock interrupted: the wait is withdrawn too.
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread waiter = new Thread(() -> {
            try {
                b.lock(Scope.path("/scope-test/timeout/y"), ScopeMode.EXCLUSIVE).release();
            } catch (Throwable t) {
                failure.set(t);
            }
        });
        waiter.start();
        awaitWaiters(Scope.path("/scope-test/timeout"), 1);
        waiter.interrupt();
        waiter.join(LIMIT.toMillis());
        assertThat(waiter.isAlive()).isFalse();
        assertThat(failure.get()).isInstanceOf(TenureException.class).hasMessageContaining("interrupted");
        Await.until("the interrupted wait to be withdrawn", LIMIT,
                () -> a.describe(Scope.path("/scope-test/timeout")).waiters().isEmpty());

        // A cancelled asynchronous wait likewise.
        CompletableFuture<ScopeHandle> cancelled = b.lockAllAsync(List.of(ScopePart.exclusive(Scope.path("/scope-test/timeout/z"))));
        awaitWaiters(Scope.path("/scope-test/timeout"), 1);
        cancelled.cancel(true);
        Await.until("the cancelled wait to be withdrawn", LIMIT,
                () -> a.describe(Scope.path("/scope-test/timeout")).waiters().isEmpty());

        held.release();
        try (ScopeHandle now = b.tryLock(Scope.path("/scope-test/timeout/x"), ScopeMode.EXCLUSIVE, Duration.ZERO)) {
            assertThat(now.fencingToken()).isGreaterThan(held.fencingToken());
        }
    }

    @Test
    void aWaitThatWouldCloseACycleIsRefusedAsADeadlockNamingBothLeases() throws Exception {
        TenureClient a = worker();
        TenureClient b = worker();
        long leaseA = a.session().id();
        long leaseB = b.session().id();
        ScopeHandle heldByA = a.lock(Scope.byteRange(104, 0, 10), ScopeMode.EXCLUSIVE);
        ScopeHandle heldByB = b.lock(Scope.byteRange(104, 100, 110), ScopeMode.EXCLUSIVE);
        CompletableFuture<ScopeHandle> aWaits = a.lockAsync(Scope.byteRange(104, 100, 110), ScopeMode.EXCLUSIVE);
        awaitWaiters(Scope.byteRange(104, 100, 110), 1);

        assertThatThrownBy(() -> b.lock(Scope.byteRange(104, 5, 6), ScopeMode.SHARED))
                .isInstanceOf(DeadlockException.class)
                .hasMessageStartingWith("deadlock")
                .hasMessageContaining("lease " + leaseA)
                .hasMessageContaining("lease " + leaseB);
        assertThat(b.describe(Scope.byteRange(104, 0, 10)).waiters()).as("nothing queued for the refused set").isEmpty();
        assertThat(aWaits).isNotDone();

        heldByB.release();
        ScopeHandle granted = aWaits.get(LIMIT.toSeconds(), TimeUnit.SECONDS);
        assertThat(granted.fencingToken()).isGreaterThan(heldByB.fencingToken());

        // Threads of one client share its lease: a scope overlapping what the lease holds would wait for itself.
        assertThatThrownBy(() -> a.lock(Scope.inode(104), ScopeMode.EXCLUSIVE))
                .isInstanceOf(DeadlockException.class)
                .hasMessageContaining("lease " + leaseA);
        assertThat(a.describe(Scope.inode(104)).waiters()).isEmpty();
        granted.release();
        heldByA.release();
    }

    @Test
    void aNamedScopeIsTheNamedLockInWriteOrReadMode() {
        TenureClient a = worker();
        TenureClient b = worker();
        String name = "scope-test/named";
        ScopeHandle exclusive = a.lock(Scope.named(name), ScopeMode.EXCLUSIVE);
        assertThat(exclusive.parts()).containsExactly(ScopePart.exclusive(Scope.named(name)));
        LockDescription lock = b.describe(name);
        assertThat(lock.held()).isTrue();
        assertThat(lock.mode()).isEqualTo(LockMode.WRITE);
        assertThat(lock.fencingToken()).isEqualTo(exclusive.fencingToken());
        assertThat(lock.leaseId()).isEqualTo(a.session().id());
        assertThat(b.readWriteLock(name).readLock().tryAcquire()).as("the plain lock sees the scope's holder").isEmpty();
        assertThatThrownBy(() -> b.tryLock(Scope.named(name), ScopeMode.SHARED, Duration.ZERO))
                .isInstanceOf(LockNotAcquiredException.class);
        ScopeDescription described = b.describe(Scope.named(name));
        assertThat(described.holders()).singleElement().satisfies(h -> assertThat(h.fencingToken()).isEqualTo(exclusive.fencingToken()));
        exclusive.release();
        assertThat(b.describe(name).held()).isFalse();

        ScopeHandle readerA = a.tryLock(Scope.named(name), ScopeMode.SHARED, Duration.ZERO);
        LockHandle readerB = b.readWriteLock(name).readLock().acquire(Duration.ZERO);
        LockDescription shared = b.describe(name);
        assertThat(shared.mode()).isEqualTo(LockMode.READ);
        assertThat(shared.holders()).extracting(LockDescription.Holder::fencingToken)
                .containsExactly(readerA.fencingToken(), readerB.fencingToken());
        TenureClient c = worker();
        assertThatThrownBy(() -> c.tryLock(Scope.named(name), ScopeMode.EXCLUSIVE, Duration.ZERO)).as("a writer waits for both readers")
                .isInstanceOf(LockNotAcquiredException.class);
        readerA.release();
        readerB.release();

        assertThatThrownBy(() -> a.lockAll(List.of(ScopePart.exclusive(Scope.named(name)), ScopePart.exclusive(Scope.inode(105)))))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("named scope ('" + name + "') cannot be part of a set");
    }

    @Test
    void setsThatBreakTheRulesAreRefusedBeforeAnythingIsSent() {
        TenureClient client = tenure.client();
        assertThatThrownBy(() -> client.lockAll(List.of()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("1 to 64 parts, got 0");
        assertThatThrownBy(() -> client.lockAll(List.of(ScopePart.exclusive(Scope.path("/a")), ScopePart.shared(Scope.path("/a/b")))))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContainingAll("path /a", "path /a/b", "overlap");
        assertThatThrownBy(() -> client.lockAll(List.of(ScopePart.exclusive(Scope.inode(7)), ScopePart.shared(Scope.inode(7)))))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("inode 7 twice");
        assertThatThrownBy(() -> client.tryLock(Scope.inode(7), ScopeMode.SHARED, Duration.ofMillis(-1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("timeout");
        assertThat(client.describe(Scope.inode(7)).holders()).isEmpty();
    }

    /** Waits until {@code count} sets overlapping {@code scope} wait. */
    private static void awaitWaiters(Scope scope, int count) {
        Await.until(() -> count + " waiters of " + scope + ": " + tenure.client().describe(scope), LIMIT,
                () -> tenure.client().describe(scope).waiters().size() >= count);
    }
}
