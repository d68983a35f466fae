package io.tenure.client.fence;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tenure.client.Scope;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class InMemoryScopeFenceGuardTest {
    private static final long INODE = 42;

    @Test
    void aWriteOutsideTheTokensScopesIsRefusedWhateverTheTokenAndNothingIsStored() {
        InMemoryScopeFenceGuard guard = InMemoryScopeFenceGuard.lenient();
        ScopedToken token = ScopedToken.of(9, range(100, 200), Scope.path("/data/a"));
        AtomicInteger ran = new AtomicInteger();

        assertThatThrownBy(() -> guard.write(token, range(150, 250), ran::incrementAndGet))
                .isInstanceOfSatisfying(LockScopeMismatchException.class, mismatch -> {
                    assertThat(mismatch.region()).isEqualTo(range(150, 250));
                    assertThat(mismatch.token()).isEqualTo(token);
                })
                .isInstanceOf(FenceRefusedException.class)
                .hasMessage("range 42:150-250 is not covered by the scopes [range 42:100-200, path /data/a] of fencing token 9"
                        + ": a token fences only writes inside the scopes it was granted for");
        assertThatThrownBy(() -> guard.check(token, Scope.byteRange(43, 100, 200)))
                .as("another inode").isInstanceOf(LockScopeMismatchException.class).hasMessageContaining("range 43:100-200");
        assertThatThrownBy(() -> guard.check(token, Scope.inode(INODE)))
                .as("the inode whole").isInstanceOf(LockScopeMismatchException.class).hasMessageContaining("inode 42");
        assertThatThrownBy(() -> guard.check(token, Scope.path("/data/b")))
                .as("a sibling path").isInstanceOf(LockScopeMismatchException.class).hasMessageContaining("path /data/b");
        assertThatThrownBy(() -> guard.tryAccept(token, Scope.path("/data")))
                .as("an ancestor path, even from tryAccept").isInstanceOf(LockScopeMismatchException.class);

        assertThat(ran).hasValue(0);
        assertThat(guard.highestAccepted(Scope.inode(INODE))).isZero();
        assertThat(guard.highestAccepted(Scope.path("/"))).isZero();
        assertThat(guard).hasToString("InMemoryScopeFenceGuard{mode=AT_LEAST, inodes=0}");
    }

    @Test
    void coveredWritesAreAcceptedAndRemembered() {
        InMemoryScopeFenceGuard guard = InMemoryScopeFenceGuard.lenient();
        ScopedToken token = ScopedToken.of(9, range(100, 200), Scope.inode(7), Scope.path("/data/a"));

        guard.check(token, range(100, 200));
        guard.check(token, range(120, 130));
        assertThat(guard.tryAccept(token, Scope.byteRange(7, 0, 10))).isTrue();
        guard.check(token, Scope.inode(7));
        guard.check(token, Scope.path("/data/a/b"));

        assertThat(guard.highestAccepted(range(0, 100))).as("not written").isZero();
        assertThat(guard.highestAccepted(range(199, 300))).isEqualTo(9);
        assertThat(guard.highestAccepted(Scope.inode(INODE))).isEqualTo(9);
        assertThat(guard.highestAccepted(Scope.byteRange(7, 1_000_000, 1_000_001))).as("the inode was written whole").isEqualTo(9);
        assertThat(guard.highestAccepted(Scope.path("/data"))).as("a descendant was written").isEqualTo(9);
        assertThat(guard.highestAccepted(Scope.path("/data/a/b/c"))).as("an ancestor was written").isEqualTo(9);
        assertThat(guard.highestAccepted(Scope.path("/data/b"))).as("a sibling").isZero();
        assertThat(guard.segments(INODE)).isEqualTo(1);
    }

    /** The timeline of {@link ScopeFenceGuard}'s class comment. */
    @Test
    void aStaleWriterIsRefusedWhereANewerTokenWroteAndOnlyThere() {
        InMemoryScopeFenceGuard guard = InMemoryScopeFenceGuard.lenient();
        ScopedToken a = ScopedToken.of(40, range(0, 200));
        ScopedToken b = ScopedToken.of(50, range(100, 300));
        List<String> file = new ArrayList<>();

        guard.write(a, range(0, 200), () -> file.add("A 0-200"));
        guard.write(b, range(100, 300), () -> file.add("B 100-300"));
        assertThatThrownBy(() -> guard.write(a, range(150, 200), () -> file.add("A 150-200")))
                .isInstanceOfSatisfying(StaleTokenException.class, stale -> {
                    assertThat(stale.region()).contains(range(150, 200));
                    assertThat(stale.resource()).isEqualTo("range 42:150-200");
                    assertThat(stale.offeredToken()).isEqualTo(40);
                    assertThat(stale.highestAccepted()).isEqualTo(50);
                })
                .isInstanceOf(FenceRefusedException.class)
                .hasMessage("region range 42:150-200 refused fencing token 40: a region overlapping it accepted token 50");
        guard.write(a, range(0, 100), () -> file.add("A 0-100"));
        assertThatThrownBy(() -> guard.write(b, range(0, 50), () -> file.add("B 0-50")))
                .isInstanceOf(LockScopeMismatchException.class);

        assertThat(file).containsExactly("A 0-200", "B 100-300", "A 0-100");
        assertThat(guard.tryAccept(a, range(99, 101))).as("one byte of it was written by B").isFalse();
        assertThat(guard.tryAccept(a, range(199, 200))).isFalse();
        assertThat(guard.highestAccepted(range(0, 100))).isEqualTo(40);
        assertThat(guard.highestAccepted(range(0, 101))).isEqualTo(50);
        assertThat(guard.segments(INODE)).isEqualTo(2);
    }

    @Test
    void writesToDisjointRangesOrInodesDoNotInterfere() {
        InMemoryScopeFenceGuard guard = InMemoryScopeFenceGuard.lenient();
        ScopedToken newer = ScopedToken.of(50, range(0, 100), Scope.byteRange(43, 0, 100));
        ScopedToken older = ScopedToken.of(10, range(100, 200), Scope.byteRange(44, 0, 100));

        guard.check(newer, range(0, 100));
        guard.check(newer, Scope.byteRange(43, 0, 100));
        guard.check(older, range(100, 200));
        guard.check(older, Scope.byteRange(44, 0, 100));

        assertThat(guard.highestAccepted(range(100, 200))).isEqualTo(10);
        assertThat(guard.highestAccepted(Scope.inode(44))).isEqualTo(10);
        assertThat(guard.segments(INODE)).isEqualTo(2);
    }

    @Test
    void anInodeWriteOverlapsEveryRangeOfIt() {
        InMemoryScopeFenceGuard guard = InMemoryScopeFenceGuard.lenient();
        ScopedToken whole30 = ScopedToken.of(30, Scope.inode(INODE));
        ScopedToken ranges20 = ScopedToken.of(20, Scope.inode(INODE));
        guard.check(ScopedToken.of(10, range(0, 10)), range(0, 10));
        guard.check(ScopedToken.of(25, range(5_000, 6_000)), range(5_000, 6_000));

        assertThatThrownBy(() -> guard.check(ranges20, Scope.inode(INODE))).isInstanceOfSatisfying(StaleTokenException.class,
                stale -> assertThat(stale.highestAccepted()).isEqualTo(25));
        guard.check(whole30, Scope.inode(INODE));
        assertThat(guard.segments(INODE)).as("the whole inode is one segment").isEqualTo(1);
        assertThat(guard.tryAccept(ranges20, range(1L << 40, (1L << 40) + 1))).isFalse();
        assertThat(guard.highestAccepted(Scope.byteRange(INODE, Long.MAX_VALUE - 1, Long.MAX_VALUE))).isEqualTo(30);
    }

    @Test
    void aPathIsStaleWhereItselfAnAncestorOrADescendantAcceptedANewerTokenNotASibling() {
        InMemoryScopeFenceGuard guard = InMemoryScopeFenceGuard.lenient();
        ScopedToken everything10 = ScopedToken.of(10, Scope.path("/"));
        guard.check(ScopedToken.of(20, Scope.path("/a/b")), Scope.path("/a/b"));

        assertThatThrownBy(() -> guard.check(everything10, Scope.path("/a"))).as("a descendant is newer")
                .isInstanceOf(StaleTokenException.class).hasMessageContaining("path /a").hasMessageContaining("token 20");
        assertThat(guard.tryAccept(everything10, Scope.path("/a/b"))).isFalse();
        assertThat(guard.tryAccept(everything10, Scope.path("/a/b/c/d"))).as("an ancestor is newer").isFalse();
        assertThat(guard.tryAccept(everything10, Scope.path("/"))).isFalse();
        assertThat(guard.tryAccept(everything10, Scope.path("/a/c"))).as("a sibling").isTrue();
        assertThat(guard.tryAccept(everything10, Scope.path("/a/bc"))).as("a sibling sharing the prefix").isTrue();

        guard.check(ScopedToken.of(30, Scope.path("/")), Scope.path("/"));
        assertThat(guard.tryAccept(ScopedToken.of(29, Scope.path("/x")), Scope.path("/x/y"))).isFalse();
        assertThat(guard.paths()).as("the root's write covers every path below it").isEqualTo(1);
    }

    @Test
    void strictRefusesTheSameTokenWhereItWasAcceptedButNotElsewhere() {
        InMemoryScopeFenceGuard guard = InMemoryScopeFenceGuard.strict();
        ScopedToken token = ScopedToken.of(7, range(0, 200), Scope.path("/a"));
        guard.check(token, range(0, 100));
        guard.check(token, Scope.path("/a/b"));

        assertThatThrownBy(() -> guard.check(token, range(50, 150)))
                .isInstanceOfSatisfying(StaleTokenException.class, stale -> assertThat(stale.highestAccepted()).isEqualTo(7))
                .hasMessage("region range 42:50-150 refused fencing token 7: a region overlapping it already accepted this token "
                        + "(each token is accepted only once)");
        assertThat(guard.tryAccept(token, Scope.path("/a"))).isFalse();
        assertThat(guard.tryAccept(token, range(100, 200))).as("disjoint").isTrue();
        assertThat(guard.tryAccept(token, Scope.path("/a/c"))).isTrue();
        assertThat(guard.tryAccept(ScopedToken.of(8, range(0, 200)), range(0, 200))).isTrue();
        assertThat(guard.mode()).isEqualTo(FenceGuard.Mode.STRICTLY_GREATER);
    }

    @Test
    void aRefusedWriteDoesNotRunAndAFailedWriteLeavesTheTokenUnaccepted() {
        InMemoryScopeFenceGuard guard = InMemoryScopeFenceGuard.lenient();
        AtomicReference<String> bytes = new AtomicReference<>("none");
        guard.write(ScopedToken.of(20, range(0, 100)), range(0, 100), () -> bytes.set("from 20"));

        assertThatThrownBy(() -> guard.write(ScopedToken.of(10, range(0, 100)), range(50, 60), () -> bytes.set("from 10")))
                .isInstanceOf(StaleTokenException.class);
        assertThat(bytes).hasValue("from 20");
        assertThatThrownBy(() -> guard.write(ScopedToken.of(30, range(0, 100)), range(0, 100), () -> {
            throw new IllegalStateException("disk full");
        })).isInstanceOf(IllegalStateException.class).hasMessage("disk full");
        assertThat(guard.highestAccepted(range(0, 100))).isEqualTo(20);
        assertThatThrownBy(() -> guard.write(ScopedToken.of(30, Scope.path("/p")), Scope.path("/p"), () -> {
            throw new IllegalStateException("disk full");
        })).isInstanceOf(IllegalStateException.class);
        assertThat(guard.highestAccepted(Scope.path("/p"))).isZero();
        guard.write(ScopedToken.of(25, range(0, 100)), range(0, 100), () -> bytes.set("from 25"));
        assertThat(bytes).hasValue("from 25");
    }

    @Test
    void badArgumentsAreRefusedBeforeAnythingIsStored() {
        InMemoryScopeFenceGuard guard = InMemoryScopeFenceGuard.lenient();
        ScopedToken token = ScopedToken.of(5, range(0, 100), Scope.named("invoices"));

        assertThatThrownBy(() -> guard.check(token, null)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("region");
        assertThatThrownBy(() -> guard.tryAccept(token, null)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("region");
        assertThatThrownBy(() -> guard.write(token, null, () -> { })).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("region");
        assertThatThrownBy(() -> guard.check(null, range(0, 10))).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("token");
        assertThatThrownBy(() -> guard.check(token, Scope.named("invoices"))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("region").hasMessageContaining("FenceGuard");
        assertThatThrownBy(() -> guard.highestAccepted(null)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("region");
        assertThatThrownBy(() -> guard.check(ScopedToken.of(0, range(0, 10)), range(0, 10)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("token");
        assertThatThrownBy(() -> guard.write(token, range(0, 10), null)).isInstanceOf(NullPointerException.class).hasMessageContaining("write");
        assertThatThrownBy(() -> InMemoryScopeFenceGuard.of(null)).isInstanceOf(NullPointerException.class).hasMessageContaining("mode");

        assertThat(guard.highestAccepted(Scope.inode(INODE))).isZero();
        assertThat(guard.segments(INODE)).isZero();
        assertThat(guard).hasToString("InMemoryScopeFenceGuard{mode=AT_LEAST, inodes=0}");
    }

    @Test
    void whatIsKeptIsOneSegmentPerRunOfBytesLastWrittenUnderOneToken() {
        InMemoryScopeFenceGuard guard = InMemoryScopeFenceGuard.lenient();
        ScopedToken ten = ScopedToken.of(10, Scope.inode(INODE), Scope.path("/"));
        for (int offset = 0; offset < 10_000; offset += 10) {
            guard.check(ten, range(offset, offset + 10));
        }
        assertThat(guard.segments(INODE)).as("adjacent writes of one token merge").isEqualTo(1);

        for (int offset = 0; offset < 10_000; offset += 20) {
            guard.check(ScopedToken.of(11 + offset, Scope.inode(INODE)), range(offset, offset + 10));
        }
        assertThat(guard.segments(INODE)).as("alternating tokens: one run each").isEqualTo(1_000);
        guard.check(ScopedToken.of(1_000_000, Scope.inode(INODE)), Scope.inode(INODE));
        assertThat(guard.segments(INODE)).isEqualTo(1);

        for (int i = 0; i < 100; i++) {
            guard.check(ten, Scope.path("/d/" + i + "/f"));
        }
        assertThat(guard.paths()).isEqualTo(100);
        guard.check(ten, Scope.path("/d"));
        assertThat(guard.paths()).as("the directory's write replaces its subtree").isEqualTo(1);
        guard.check(ten, Scope.path("/d/0/g"));
        assertThat(guard.paths()).as("an ancestor holds this token already").isEqualTo(1);
        assertThat(guard.highestAccepted(Scope.path("/d/0/g"))).isEqualTo(10);
    }

    /**
     * Threads write ranges of one inode and paths of a small tree with seeded tokens (a new
     * grant now and then, otherwise a recent one). Each accepted write appends itself to a log
     * from inside the fence, yielding midway, so the log is the order of acceptance: no write in
     * it may overlap an earlier one with a higher token, and every refusal names a higher token.
     */
    @Test
    void concurrentWritersNeverOverwriteANewerTokensRegion() throws Exception {
        InMemoryScopeFenceGuard guard = InMemoryScopeFenceGuard.lenient();
        List<String> names = List.of("/", "/a", "/a/b", "/a/c", "/b");
        List<Object[]> log = Collections.synchronizedList(new ArrayList<>()); // {region, token}
        AtomicLong grants = new AtomicLong();
        AtomicInteger refused = new AtomicInteger();
        int threads = 8;
        int writesPerThread = 2_000;
        CountDownLatch start = new CountDownLatch(1);
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<?>> writers = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                Random random = new Random(7 + t);
                writers.add(pool.submit(() -> {
                    start.await();
                    for (int i = 0; i < writesPerThread; i++) {
                        long token = random.nextInt(5) == 0 ? grants.incrementAndGet() : Math.max(1, grants.get() - random.nextInt(4));
                        Scope region;
                        if (random.nextBoolean()) {
                            long from = random.nextInt(1_000);
                            region = range(from, from + 1 + random.nextInt(200));
                        } else {
                            region = Scope.path(names.get(random.nextInt(names.size())));
                        }
                        ScopedToken scoped = ScopedToken.of(token, Scope.inode(INODE), Scope.path("/"));
                        try {
                            guard.write(scoped, region, () -> {
                                Thread.yield();
                                log.add(new Object[] {region, token});
                            });
                        } catch (StaleTokenException stale) {
                            assertThat(stale.highestAccepted()).isGreaterThan(token);
                            refused.incrementAndGet();
                        }
                    }
                    return null;
                }));
            }
            start.countDown();
            for (Future<?> writer : writers) {
                writer.get(60, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
            assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
        }

        assertThat(refused.get()).as("stale writes were refused").isPositive();
        assertThat(log.size() + refused.get()).isEqualTo(threads * writesPerThread);
        List<Object[]> accepted = List.copyOf(log);
        for (int later = 0; later < accepted.size(); later++) {
            Scope region = (Scope) accepted.get(later)[0];
            long token = (Long) accepted.get(later)[1];
            for (int earlier = 0; earlier < later; earlier++) {
                if (region.overlaps((Scope) accepted.get(earlier)[0])) {
                    assertThat((Long) accepted.get(earlier)[1]).as("write #%d, %s with %d", later, region, token)
                            .isLessThanOrEqualTo(token);
                }
            }
        }
    }

    private static Scope range(long start, long end) {
        return Scope.byteRange(INODE, start, end);
    }
}
