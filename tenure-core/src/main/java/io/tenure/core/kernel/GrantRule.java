package io.tenure.core.kernel;

import java.util.Collection;

/**
 * Decides what a {@link GrantQueue} may grant: whether a claim fits beside the current holders,
 * and whether a waiter may pass an earlier one. The queue is the mechanism, the rule the policy:
 *
 * <ul>
 *   <li>an exclusive lock ({@link #exclusive()}): one holder; strict FIFO;</li>
 *   <li>a counting semaphore: the holders' permits plus the claim's at most N; strict FIFO (a
 *       small request does not barge past a large one at the head);</li>
 *   <li>a read/write lock: readers fit beside readers, a writer beside nobody; a reader must
 *       follow an earlier waiting writer, so a stream of readers cannot starve it;</li>
 *   <li>lock scopes (paths, byte ranges): a claim conflicts with overlapping claims when one is
 *       exclusive; a waiter passes earlier waiters it does not conflict with, so a writer to
 *       [200,300) is not stuck behind one to [0,100). Such a rule keeps its own index of the
 *       holders (an interval tree, a path trie), told of every change through {@link #held} and
 *       {@link #released}; it is made per queue, and one queue then serves a whole namespace of
 *       names (an inode's ranges, a tree of paths), and one claim may cover several of them.</li>
 * </ul>
 *
 * <p>{@link #conflicts} names who stands in whose way, for describing a queue and for walking the
 * wait-for graph (deadlock reports).
 */
public interface GrantRule<C extends Claim> {

    /** Whether {@code claim} may hold now beside {@code holders} (each already granted). */
    boolean fits(Collection<Hold<C>> holders, C claim);

    /** Whether {@code later}, queued after {@code earlier}, must wait until {@code earlier} is granted or gone. */
    boolean mustFollow(C earlier, C later);

    /** Whether holding {@code held} keeps {@code claim} from being granted. */
    boolean conflicts(C held, C claim);

    /**
     * True when {@link #mustFollow} is true for every pair: then the first waiter that cannot be
     * granted stops a scan of the queue, and a grant costs O(1) however long the queue is.
     */
    default boolean strictlyFifo() {
        return false;
    }

    /**
     * Whether every later waiter must follow {@code waiter} (a queued writer of a read/write
     * lock): then a scan of the queue stops at it.
     */
    default boolean holdsBackAll(C waiter) {
        return strictlyFifo();
    }

    /** A claim was granted (for rules that index their holders). */
    default void held(C claim) {
    }

    /** A holder let go (for rules that index their holders). */
    default void released(C claim) {
    }

    /**
     * The waiters a scan of the queue passed over (they could not be granted yet), so that a
     * later waiter that must follow one of them is held back too. One per scan.
     */
    interface PassedOver<C extends Claim> {
        /** Whether {@code later} must follow a waiter passed over so far. */
        boolean holdsBack(C later);

        /** {@code waiter} could not be granted and stays queued. */
        void add(C waiter);
    }

    /**
     * A new, empty record of passed-over waiters. This one asks {@link #mustFollow} of each, a
     * scan costing O(n²) in the waiters passed over; a rule with an index of its own (lock
     * scopes) answers from an index of the passed-over claims instead.
     */
    default PassedOver<C> passedOver() {
        return new PassedOver<>() {
            private final java.util.List<C> passed = new java.util.ArrayList<>();

            @Override
            public boolean holdsBack(C later) {
                for (C earlier : passed) {
                    if (mustFollow(earlier, later)) {
                        return true;
                    }
                }
                return false;
            }

            @Override
            public void add(C waiter) {
                passed.add(waiter);
            }
        };
    }

    /** One holder at a time, granted in join order. */
    static <C extends Claim> GrantRule<C> exclusive() {
        return new GrantRule<>() {
            @Override
            public boolean fits(Collection<Hold<C>> holders, C claim) {
                return holders.isEmpty();
            }

            @Override
            public boolean mustFollow(C earlier, C later) {
                return true;
            }

            @Override
            public boolean conflicts(C held, C claim) {
                return true;
            }

            @Override
            public boolean strictlyFifo() {
                return true;
            }
        };
    }
}
