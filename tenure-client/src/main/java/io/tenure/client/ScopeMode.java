package io.tenure.client;

/** How a lease holds a {@link Scope}: alone ({@link #EXCLUSIVE}) or beside other shared holders ({@link #SHARED}). */
public enum ScopeMode {
    EXCLUSIVE,
    SHARED;

    /** Whether holding {@code a} in mode {@code ma} keeps {@code b} in mode {@code mb} from being held. */
    public static boolean conflicts(Scope a, ScopeMode ma, Scope b, ScopeMode mb) {
        return (ma == EXCLUSIVE || mb == EXCLUSIVE) && a.overlaps(b);
    }
}
