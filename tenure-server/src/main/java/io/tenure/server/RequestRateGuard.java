package io.tenure.server;

import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * The member-wide request-rate guard: a token bucket holding one second's worth of requests,
 * refilled continuously. A request that finds it empty is refused ({@link LimitExceeded}) instead
 * of queueing behind the others; lease keep-alives are not counted, so an overloaded member
 * sheds new work before it lets leases lapse. Thread-safe.
 */
public final class RequestRateGuard {
    private final int perSecond;
    private final LongSupplier nanoClock;
    private double tokens; // guarded by this
    private long refilledAt; // guarded by this

    /** @param perSecond requests admitted per second; 0 admits everything */
    public RequestRateGuard(int perSecond, LongSupplier nanoClock) {
        this.perSecond = perSecond;
        this.nanoClock = nanoClock;
        this.tokens = perSecond;
        this.refilledAt = nanoClock.getAsLong();
    }

    /** Takes one request's token, or returns false when the member is over its rate. */
    public synchronized boolean tryAdmit() {
        if (perSecond == 0) {
            return true;
        }
        long now = nanoClock.getAsLong();
        double refill = (now - refilledAt) / (double) TimeUnit.SECONDS.toNanos(1) * perSecond;
        refilledAt = now;
        tokens = Math.min(perSecond, tokens + refill);
        if (tokens < 1) {
            return false;
        }
        tokens -= 1;
        return true;
    }

    /** The refusal for a request over the rate. */
    public LimitExceeded refusal() {
        return new LimitExceeded("max-requests-per-second", "this member admits at most " + perSecond
                + " requests per second (--max-requests-per-second) and is at that rate now; retry shortly");
    }
}
