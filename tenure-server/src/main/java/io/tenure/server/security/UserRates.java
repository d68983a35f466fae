package io.tenure.server.security;

import io.tenure.server.LimitExceeded;
import io.tenure.server.RequestRateGuard;
import io.tenure.server.raft.TenureStateMachine;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * The per-user request quota ({@code --max-requests-per-user}): a token bucket per user on this
 * member, as the member-wide guard is, counting each request a user makes while authentication
 * is on (keep-alives not counted, so a busy user's leases do not lapse). A call without a user is
 * not counted here (the member-wide guard still counts it). Buckets exist only for users that
 * made a call, and users exist only in the replicated state, so their number is bounded.
 */
public final class UserRates {
    private final int perSecond;
    private final TenureStateMachine stateMachine;
    private final LongSupplier nanoClock;
    private final ConcurrentHashMap<String, RequestRateGuard> byUser = new ConcurrentHashMap<>();

    /** @param perSecond requests one user may make per second; 0 admits everything */
    public UserRates(int perSecond, TenureStateMachine stateMachine, LongSupplier nanoClock) {
        this.perSecond = perSecond;
        this.stateMachine = stateMachine;
        this.nanoClock = nanoClock;
    }

    /**
     * Takes one request's token from {@code caller}'s bucket.
     *
     * @throws LimitExceeded naming the user and {@code --max-requests-per-user} when it is over its quota
     */
    public void admit(Principal caller) {
        if (perSecond == 0 || caller.isNobody() || !stateMachine.accessEnabled()) {
            return;
        }
        if (!byUser.computeIfAbsent(caller.user(), user -> new RequestRateGuard(perSecond, nanoClock)).tryAdmit()) {
            throw new LimitExceeded("max-requests-per-user", "user '" + caller.user() + "' may make at most " + perSecond
                    + " requests per second on this member (--max-requests-per-user) and is at that rate now; retry shortly");
        }
    }
}
