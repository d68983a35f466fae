package io.tenure.server.http;

import io.tenure.server.Causes;
import io.tenure.server.LimitExceeded;
import io.tenure.server.NotServingException;
import io.tenure.server.Overloaded;
import io.tenure.server.RequestRejected;

import java.util.Map;
import java.util.concurrent.CancellationException;
import java.util.concurrent.TimeoutException;

/** The one table from Tenure's failures to HTTP error answers (the HTTP twin of the gRPC {@code Statuses}). */
final class Failures {
    /**
     * The service layer names its fields as the gRPC messages do; the HTTP bodies call them
     * otherwise. Anything not listed keeps its name.
     */
    private static final Map<String, String> FIELDS = Map.of(
            "ttl", "ttl_ms",
            "client_id", "owner_id",
            "name", "lock",
            "key", "lock",
            "id", "lease_id",
            "timeout_ms", "wait_ms");

    private Failures() {}

    static Failure of(Throwable error) {
        Throwable e = Causes.unwrap(error);
        if (e instanceof Failure f) {
            return f;
        }
        if (e instanceof RequestRejected r) {
            ErrorCode code = switch (r.code()) {
                case INVALID_ARGUMENT -> ErrorCode.INVALID_ARGUMENT;
                case NOT_FOUND -> ErrorCode.LEASE_NOT_FOUND;
                case FAILED_PRECONDITION -> ErrorCode.STALE;
                case ALREADY_EXISTS -> ErrorCode.ALREADY_EXISTS;
            };
            return new Failure(code, r.field() == null ? null : FIELDS.getOrDefault(r.field(), r.field()), r.getMessage());
        }
        if (e instanceof Overloaded overloaded) {
            return new Failure(ErrorCode.OVERLOADED, null, overloaded.getMessage(),
                    Map.of("retry_after_ms", overloaded.retryAfterMillis()));
        }
        if (e instanceof io.tenure.server.Unauthenticated u) {
            return new Failure(ErrorCode.UNAUTHENTICATED, null, u.getMessage());
        }
        if (e instanceof io.tenure.server.PermissionDenied d) {
            return new Failure(ErrorCode.PERMISSION_DENIED, null, d.getMessage());
        }
        if (e instanceof LimitExceeded limit) {
            return new Failure(ErrorCode.LIMIT_EXCEEDED, null, limit.getMessage());
        }
        if (e instanceof NotServingException || e instanceof java.io.IOException || e instanceof java.io.UncheckedIOException
                || e instanceof TimeoutException
                || e instanceof CancellationException) {
            return new Failure(ErrorCode.UNAVAILABLE, null, "this member cannot serve the request now: " + e.getMessage()
                    + "; retry (a write's outcome is unknown, and retries are idempotent)");
        }
        return new Failure(ErrorCode.INTERNAL, null, String.valueOf(e));
    }

    /** A request Jetty refused before any handler saw it, with Jetty's status and reason. */
    static Failure ofBadMessage(int status, String reason) {
        ErrorCode code = switch (status) {
            case 413 -> ErrorCode.PAYLOAD_TOO_LARGE;
            case 414 -> ErrorCode.URI_TOO_LONG;
            case 431 -> ErrorCode.HEADERS_TOO_LARGE;
            default -> ErrorCode.MALFORMED_REQUEST;
        };
        return new Failure(code, null, "the request is malformed (" + reason + "); percent-encode a lock name's"
                + " reserved characters, '%' as %25");
    }

}
