package io.tenure.core.kernel;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * The holders of one resource and its FIFO queue of waiters, each bound to a lease; a
 * {@link GrantRule} decides who fits. Every change keeps the primitive's {@link Ties} in step, so
 * a lease's end finds everything it holds and waits for.
 *
 * <p>Fair and herd-free (I7): a freed unit is granted, in join order, to exactly the waiters the
 * rule now admits: one waiter for an exclusive lock, the readers that can now share for a
 * read/write lock. A waiter is granted only when it fits beside the holders and no earlier waiter
 * it must follow is still queued, so nobody barges in ahead of the queue.
 *
 * <p>Holders and waiters are known by their claim's {@link Claim#id}: the lease, for kinds where
 * a lease holds or waits once per resource; a claim's own id where a lease may hold several claims
 * of one queue (lock scopes), and then every method's {@code id} is that.
 *
 * <p>Not thread-safe, deterministic: holders and waiters are kept in grant and join order.
 */
public final class GrantQueue<C extends Claim> {
    private final String key;
    private final GrantRule<C> rule;
    private final Ties ties;
    private final LinkedHashMap<Long, Hold<C>> holders = new LinkedHashMap<>(2);
    private final LinkedHashMap<Long, Waiter<C>> waiters = new LinkedHashMap<>(2);

    public GrantQueue(String key, GrantRule<C> rule, Ties ties) {
        this.key = key;
        this.rule = rule;
        this.ties = ties;
    }

    public String key() {
        return key;
    }

    /** The hold of claim {@code id} (the lease's, where claims are known by lease), or null. */
    public Hold<C> holder(long id) {
        return holders.get(id);
    }

    /** The place in the queue of claim {@code id} (the lease's, where claims are known by lease), or null. */
    public Waiter<C> waiter(long id) {
        return waiters.get(id);
    }

    /** The holders, in grant order. */
    public Collection<Hold<C>> holders() {
        return Collections.unmodifiableCollection(holders.values());
    }

    /** The waiters, in join order. */
    public Collection<Waiter<C>> waiters() {
        return Collections.unmodifiableCollection(waiters.values());
    }

    public int waiterCount() {
        return waiters.size();
    }

    /** Nobody holds and nobody waits. */
    public boolean isEmpty() {
        return holders.isEmpty() && waiters.isEmpty();
    }

    /** How many waiters are queued before claim {@code id} (all of them when it does not wait). */
    public int ahead(long id) {
        int n = 0;
        for (Long queued : waiters.keySet()) {
            if (queued == id) {
                return n;
            }
            n++;
        }
        return n;
    }

    /** Whether a new claim could be granted now: it fits beside the holders, and no waiter it must follow is queued. */
    public boolean grantable(C claim) {
        for (Waiter<C> w : waiters.values()) {
            if (rule.mustFollow(w.claim(), claim)) {
                return false;
            }
        }
        return rule.fits(holders.values(), claim);
    }

    /** Grants {@code claim} with {@code token}; the caller checked it may ({@link #grantable}, or a waiter it removed). */
    public Hold<C> hold(C claim, long token) {
        Hold<C> hold = new Hold<>(claim, token);
        holders.put(claim.id(), hold);
        rule.held(claim);
        ties.hold(claim.leaseId(), key);
        return hold;
    }

    /**
     * Changes what a holder holds, keeping its token and its place in grant order (a writer that
     * downgrades to read). Nobody is granted yet: see {@link #grantWaiters}.
     */
    public Hold<C> change(C claim) {
        Hold<C> before = holders.get(claim.id());
        if (before == null) {
            throw new IllegalStateException("lease " + claim.leaseId() + " holds nothing of '" + key + "'");
        }
        rule.released(before.claim());
        Hold<C> after = new Hold<>(claim, before.token());
        holders.put(claim.id(), after);
        rule.held(claim);
        return after;
    }

    /** Queues {@code claim} at the back. */
    public Waiter<C> enqueue(C claim, long joinedAt) {
        Waiter<C> waiter = new Waiter<>(claim, joinedAt);
        waiters.put(claim.id(), waiter);
        ties.await(claim.leaseId(), key);
        return waiter;
    }

    /** Takes claim {@code id}'s hold away (nobody is granted yet: see {@link #grantWaiters}); null when it held nothing. */
    public Hold<C> release(long id) {
        Hold<C> hold = holders.remove(id);
        if (hold != null) {
            rule.released(hold.claim());
            ties.unhold(hold.leaseId(), key);
        }
        return hold;
    }

    /** Takes claim {@code id} out of the queue; null when it was not queued. */
    public Waiter<C> withdraw(long id) {
        Waiter<C> waiter = waiters.remove(id);
        if (waiter != null) {
            ties.unawait(waiter.leaseId(), key);
        }
        return waiter;
    }

    /**
     * Grants, in join order, every waiter that may hold now; each grant takes the next token from
     * {@code tokens} and is then passed to {@code granted} (which stamps its events and wakes its
     * waiter). Call it after every change that may free a unit.
     *
     * @return how many waiters were granted
     */
    public int grantWaiters(LongSupplier tokens, Consumer<Hold<C>> granted) {
        int count = 0;
        GrantRule.PassedOver<C> passedOver = null;
        Iterator<Waiter<C>> queue = waiters.values().iterator();
        while (queue.hasNext()) {
            C claim = queue.next().claim();
            if ((passedOver == null || !passedOver.holdsBack(claim)) && rule.fits(holders.values(), claim)) {
                queue.remove();
                ties.unawait(claim.leaseId(), key);
                granted.accept(hold(claim, tokens.getAsLong()));
                count++;
                continue;
            }
            if (rule.strictlyFifo() || rule.holdsBackAll(claim)) {
                break;
            }
            if (passedOver == null) {
                passedOver = rule.passedOver();
            }
            passedOver.add(claim);
        }
        return count;
    }

    /**
     * Whom claim {@code id} waits for: the holders whose claims conflict with it, then the
     * earlier waiters it must follow, by claim id in grant and join order. Empty when it does
     * not wait. The edges of a wait-for graph.
     */
    public List<Long> blockers(long id) {
        Waiter<C> waiter = waiters.get(id);
        if (waiter == null) {
            return List.of();
        }
        List<Long> blocking = new ArrayList<>();
        for (Hold<C> h : holders.values()) {
            if (rule.conflicts(h.claim(), waiter.claim())) {
                blocking.add(h.id());
            }
        }
        for (Waiter<C> w : waiters.values()) {
            if (w == waiter) {
                break;
            }
            if (rule.mustFollow(w.claim(), waiter.claim())) {
                blocking.add(w.id());
            }
        }
        return blocking;
    }
}
