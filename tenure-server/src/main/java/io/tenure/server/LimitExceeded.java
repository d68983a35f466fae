package io.tenure.server;

/**
 * A request refused because it would take this member, a client or a lock over one of the
 * {@link ServerLimits}: gRPC {@code RESOURCE_EXHAUSTED}, HTTP 429. The member keeps serving others;
 * the same request may succeed once the client or lock has less.
 */
public final class LimitExceeded extends RuntimeException {
    private final String limit;

    /**
     * @param limit   the limit's option name, e.g. {@code max-waiters-per-lock}
     * @param message what was refused and why, naming the limit and its value
     */
    public LimitExceeded(String limit, String message) {
        super(message);
        this.limit = limit;
    }

    /** The option name of the limit that was reached. */
    public String limit() {
        return limit;
    }
}
