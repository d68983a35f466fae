package io.tenure.core.kernel;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiPredicate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The kernel's grant queue under the rules the coming primitives need: an exclusive lock,
 * counting permits, shared and exclusive modes, and ranges whose waiters pass each other when they
 * do not conflict. The rules here are test rules: they show the queue carries them without change.
 */
class GrantQueueTest {
    private final Ties ties = new Ties();
    private final AtomicLong tokens = new AtomicLong(100);

    /** A claim of {@code permits} units, shared or exclusive, over [from, to). */
    record Ask(long leaseId, int permits, boolean exclusive, long from, long to) implements Claim {
        static Ask one(long lease) {
            return new Ask(lease, 1, true, 0, 1);
        }

        static Ask permits(long lease, int n) {
            return new Ask(lease, n, false, 0, 1);
        }

        static Ask read(long lease) {
            return new Ask(lease, 1, false, 0, 1);
        }

        static Ask write(long lease) {
            return new Ask(lease, 1, true, 0, 1);
        }

        static Ask range(long lease, long from, long to) {
            return new Ask(lease, 1, true, from, to);
        }

        boolean overlaps(Ask other) {
            return from < other.to && other.from < to;
        }
    }

    /** A test rule made of its three predicates. */
    record Rule(BiPredicate<Collection<Hold<Ask>>, Ask> fitsWhen, BiPredicate<Ask, Ask> followsWhen,
                BiPredicate<Ask, Ask> conflictsWhen, boolean strict) implements GrantRule<Ask> {
        @Override
        public boolean fits(Collection<Hold<Ask>> holders, Ask claim) {
            return fitsWhen.test(holders, claim);
        }

        @Override
        public boolean mustFollow(Ask earlier, Ask later) {
            return followsWhen.test(earlier, later);
        }

        @Override
        public boolean conflicts(Ask held, Ask claim) {
            return conflictsWhen.test(held, claim);
        }

        @Override
        public boolean strictlyFifo() {
            return strict;
        }
    }

    /** N permits; strict FIFO, so a small request does not barge past a large one at the head. */
    static GrantRule<Ask> permits(int n) {
        return new Rule((holders, claim) -> holders.stream().mapToInt(h -> h.claim().permits()).sum() + claim.permits() <= n,
                (earlier, later) -> true, (held, claim) -> true, true);
    }

    /** Whether the held claim stands in the way of the claim, where both cover the same bytes and one writes. */
    private static boolean overlapAndOneWrites(Ask held, Ask claim) {
        return held.overlaps(claim) && (held.exclusive() || claim.exclusive());
    }

    /** Shared readers, one exclusive writer; a reader follows an earlier waiting writer (no writer starvation). */
    static final GrantRule<Ask> READ_WRITE = new Rule(
            (holders, claim) -> holders.stream().noneMatch(h -> overlapAndOneWrites(h.claim(), claim)),
            (earlier, later) -> earlier.exclusive() || later.exclusive(),
            GrantQueueTest::overlapAndOneWrites, false);

    /** Byte ranges: conflicts only where they overlap; a waiter passes earlier waiters it does not overlap. */
    static final GrantRule<Ask> RANGES = new Rule(
            (holders, claim) -> holders.stream().noneMatch(h -> overlapAndOneWrites(h.claim(), claim)),
            GrantQueueTest::overlapAndOneWrites, GrantQueueTest::overlapAndOneWrites, false);

    private List<Long> releaseAndGrant(GrantQueue<Ask> queue, long lease) {
        assertThat(queue.release(lease)).isNotNull();
        List<Long> granted = new ArrayList<>();
        queue.grantWaiters(tokens::incrementAndGet, h -> granted.add(h.leaseId()));
        return granted;
    }

    private void hold(GrantQueue<Ask> queue, Ask ask) {
        assertThat(queue.grantable(ask)).as("%s can be granted", ask).isTrue();
        queue.hold(ask, tokens.incrementAndGet());
    }

    @Test
    void anExclusiveQueueGrantsOneWaiterPerReleaseInJoinOrder() {
        GrantQueue<Ask> queue = new GrantQueue<>("k", GrantRule.exclusive(), ties);
        hold(queue, Ask.one(1));
        for (long lease = 2; lease <= 4; lease++) {
            assertThat(queue.grantable(Ask.one(lease))).isFalse();
            queue.enqueue(Ask.one(lease), lease);
        }
        assertThat(queue.blockers(3)).containsExactly(1L, 2L);

        assertThat(releaseAndGrant(queue, 1)).containsExactly(2L);
        assertThat(releaseAndGrant(queue, 2)).containsExactly(3L);
        assertThat(queue.holder(3).token()).as("tokens come from the supplier").isGreaterThan(100);
        assertThat(ties.heldBy(3)).containsExactly("k");
        assertThat(ties.waitedBy(4)).containsExactly("k");
        assertThat(releaseAndGrant(queue, 3)).containsExactly(4L);
        assertThat(releaseAndGrant(queue, 4)).isEmpty();
        assertThat(queue.isEmpty()).isTrue();
        assertThat(ties.heldBy(4)).isEmpty();
    }

    @Test
    void permitsAreGrantedInOrderWithoutBarging() {
        GrantQueue<Ask> queue = new GrantQueue<>("s", permits(3), ties);
        hold(queue, Ask.permits(1, 2));
        queue.enqueue(Ask.permits(2, 2), 2);
        // One permit is free, but the head of the queue wants two: a newcomer asking for one waits too.
        assertThat(queue.grantable(Ask.permits(3, 1))).isFalse();
        queue.enqueue(Ask.permits(3, 1), 3);

        assertThat(releaseAndGrant(queue, 1)).as("both fit once two permits are back").containsExactly(2L, 3L);
    }

    @Test
    void readersShareAndAWaitingWriterIsNotStarved() {
        GrantQueue<Ask> queue = new GrantQueue<>("rw", READ_WRITE, ties);
        hold(queue, Ask.read(1));
        hold(queue, Ask.read(2));
        queue.enqueue(Ask.write(3), 3);
        assertThat(queue.grantable(Ask.read(4))).as("a reader behind a waiting writer waits").isFalse();
        queue.enqueue(Ask.read(4), 4);
        queue.enqueue(Ask.read(5), 5);
        assertThat(queue.blockers(4)).containsExactly(3L);

        assertThat(releaseAndGrant(queue, 1)).isEmpty();
        assertThat(releaseAndGrant(queue, 2)).containsExactly(3L);
        assertThat(releaseAndGrant(queue, 3)).as("the readers after the writer, together").containsExactly(4L, 5L);
    }

    @Test
    void aRangeWaiterPassesEarlierWaitersItDoesNotOverlap() {
        GrantQueue<Ask> queue = new GrantQueue<>("inode-7", RANGES, ties);
        hold(queue, Ask.range(1, 0, 100));
        hold(queue, Ask.range(2, 200, 300));
        queue.enqueue(Ask.range(3, 50, 60), 3);      // behind 1
        queue.enqueue(Ask.range(4, 250, 260), 4);    // behind 2
        queue.enqueue(Ask.range(5, 55, 251), 5);     // behind 1, 2, and the waiters 3 and 4

        assertThat(queue.blockers(5)).containsExactly(1L, 2L, 3L, 4L);
        assertThat(releaseAndGrant(queue, 2)).as("[250,260) is not held up by [50,60) waiting before it").containsExactly(4L);
        assertThat(releaseAndGrant(queue, 1)).as("5 still follows 3, which it overlaps").containsExactly(3L);
        assertThat(releaseAndGrant(queue, 3)).isEmpty();
        assertThat(releaseAndGrant(queue, 4)).containsExactly(5L);
    }

    @Test
    void aWithdrawnWaiterLeavesNoTieAndUnblocksNobodyByItself() {
        GrantQueue<Ask> queue = new GrantQueue<>("k", GrantRule.exclusive(), ties);
        hold(queue, Ask.one(1));
        queue.enqueue(Ask.one(2), 2);
        queue.enqueue(Ask.one(3), 3);

        assertThat(queue.withdraw(2)).isNotNull();
        assertThat(queue.withdraw(2)).isNull();
        assertThat(ties.waitedBy(2)).isEmpty();
        assertThat(queue.ahead(3)).isZero();
        assertThat(releaseAndGrant(queue, 1)).containsExactly(3L);
    }
}
