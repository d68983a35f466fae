package io.tenure.server;

import io.tenure.core.kernel.Result;

import java.util.concurrent.CompletableFuture;

/**
 * A request refused for what it asks, not for the member's condition: invalid input, an unknown
 * lease, a stale token. Retrying it unchanged fails the same way. The front ends map each
 * {@link Result.Code} to one status, in one place.
 */
public final class RequestRejected extends RuntimeException {
    private final Result.Code code;
    private final String field;

    public RequestRejected(Result.Code code, String field, String message) {
        super(message);
        this.code = code;
        this.field = field;
    }

    public static RequestRejected invalid(String field, String message) {
        return new RequestRejected(Result.Code.INVALID_ARGUMENT, field, message);
    }

    /**
     * A future that completes when {@code problem} (the message of a core {@code Limits} check) is
     * null, and fails with the INVALID_ARGUMENT refusal naming {@code field} otherwise: the start
     * of a request's chain, so that bad input is refused before anything goes to the log.
     */
    public static CompletableFuture<Void> unless(String field, String problem) {
        return problem == null ? CompletableFuture.completedFuture(null) : CompletableFuture.failedFuture(invalid(field, problem));
    }

    public static RequestRejected of(Result.Rejected rejected) {
        return new RequestRejected(rejected.code(), null, rejected.message());
    }

    /** The failure for a command whose result is not the one its caller expected: a rejection, or a bug. */
    public static RuntimeException of(io.tenure.core.kernel.Applied applied) {
        if (applied.result() instanceof Result.Rejected r) {
            return of(r);
        }
        return new IllegalStateException("unexpected result " + applied.result());
    }

    public Result.Code code() {
        return code;
    }

    /** The request field at fault, or null. */
    public String field() {
        return field;
    }
}
