package io.tenure.server.security;

import io.tenure.core.TenureState;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * What each user's leases hold and wait for, for the quota {@code --max-locks-per-user}, without
 * counting every time: the count over a user's leases costs a look at each of its leases in every
 * primitive, which at thousands of acquires a second by one user was a tenth of a member's CPU.
 * So it is counted from the state at most every {@value #RECOUNT_MILLIS} ms per user, plus the
 * acquires this member admitted since. Releases since the count are not subtracted: the estimate
 * errs towards refusing early, by at most what the user released in that time, never towards
 * letting a user far past its quota. Thread-safe.
 */
public final class UserHolds {
    static final long RECOUNT_MILLIS = 100;

    private final LongSupplier nanoClock;
    private final ConcurrentHashMap<String, Count> byUser = new ConcurrentHashMap<>();

    private static final class Count {
        long countedAtNanos;
        int counted;
        int admittedSince;
    }

    public UserHolds(LongSupplier nanoClock) {
        this.nanoClock = nanoClock;
    }

    /** What {@code owner}'s leases hold and wait for, as {@code state} (read under its lock) says, or the recent estimate. */
    public int estimate(String owner, TenureState state) {
        Count count = byUser.computeIfAbsent(owner, user -> new Count());
        synchronized (count) {
            long now = nanoClock.getAsLong();
            if (count.countedAtNanos == 0 || now - count.countedAtNanos >= TimeUnit.MILLISECONDS.toNanos(RECOUNT_MILLIS)) {
                count.counted = state.holdsAndWaitsOfOwner(owner);
                count.countedAtNanos = now == 0 ? 1 : now;
                count.admittedSince = 0;
            }
            return count.counted + count.admittedSince;
        }
    }

    /** An acquire of {@code owner}'s was admitted here: it may hold or wait for one more. */
    public void admitted(String owner) {
        Count count = byUser.get(owner);
        if (count != null) {
            synchronized (count) {
                count.admittedSince++;
            }
        }
    }
}
