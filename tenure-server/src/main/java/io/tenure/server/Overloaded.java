package io.tenure.server;

/**
 * New work the member sheds because it is behind (gRPC {@code RESOURCE_EXHAUSTED} with the
 * {@code tenure-retry-after-ms} trailer, HTTP 429 {@code overloaded} with {@code Retry-After}):
 * nothing was proposed, and the same request will likely succeed after the hint. Keep-alives,
 * releases, cancels and revokes are never shed: they keep or free what is held.
 */
public final class Overloaded extends RuntimeException {
    private final String kind;
    private final long retryAfterMillis;

    public Overloaded(String kind, long retryAfterMillis, String message) {
        super(message, null, false, false);
        this.kind = kind;
        this.retryAfterMillis = retryAfterMillis;
    }

    /** What was shed: acquire, grant, read or watch. */
    public String kind() {
        return kind;
    }

    /** When a retry is worth making, in milliseconds; the client adds jitter. */
    public long retryAfterMillis() {
        return retryAfterMillis;
    }
}
