package io.tenure.server.grpc;

import io.tenure.server.Causes;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.tenure.server.LimitExceeded;
import io.tenure.server.NotServingException;
import io.tenure.server.Overloaded;
import io.tenure.server.RequestRejected;

import java.util.concurrent.CancellationException;

/** The one table from Tenure's failures to gRPC statuses. */
final class Statuses {
    /**
     * The trailer of a shed request ({@code RESOURCE_EXHAUSTED}): after how many milliseconds a
     * retry is worth making. Its absence marks a limit that a retry will not lift.
     */
    static final Metadata.Key<String> RETRY_AFTER_MS = Metadata.Key.of("tenure-retry-after-ms", Metadata.ASCII_STRING_MARSHALLER);

    private Statuses() {}

    static StatusRuntimeException of(Throwable error) {
        Throwable e = Causes.unwrap(error);
        if (e instanceof StatusRuntimeException sre) {
            return sre;
        }
        if (e instanceof RequestRejected r) {
            Status status = switch (r.code()) {
                case INVALID_ARGUMENT -> Status.INVALID_ARGUMENT;
                case NOT_FOUND -> Status.NOT_FOUND;
                case FAILED_PRECONDITION -> Status.FAILED_PRECONDITION;
                case ALREADY_EXISTS -> Status.ALREADY_EXISTS;
            };
            return status.withDescription(r.getMessage()).asRuntimeException();
        }
        if (e instanceof Overloaded overloaded) {
            Metadata trailers = new Metadata();
            trailers.put(RETRY_AFTER_MS, Long.toString(overloaded.retryAfterMillis()));
            return Status.RESOURCE_EXHAUSTED.withDescription(e.getMessage()).asRuntimeException(trailers);
        }
        if (e instanceof io.tenure.server.Unauthenticated) {
            return Status.UNAUTHENTICATED.withDescription(e.getMessage()).asRuntimeException();
        }
        if (e instanceof io.tenure.server.PermissionDenied) {
            return Status.PERMISSION_DENIED.withDescription(e.getMessage()).asRuntimeException();
        }
        if (e instanceof LimitExceeded) {
            return Status.RESOURCE_EXHAUSTED.withDescription(e.getMessage()).asRuntimeException();
        }
        if (e instanceof NotServingException) {
            return Status.UNAVAILABLE.withDescription(e.getMessage()).asRuntimeException();
        }
        if (e instanceof java.io.IOException) {
            return Status.UNAVAILABLE.withDescription(e.getMessage()).asRuntimeException();
        }
        if (e instanceof CancellationException) {
            return Status.CANCELLED.withDescription(e.getMessage()).asRuntimeException();
        }
        return Status.INTERNAL.withDescription(String.valueOf(e)).withCause(e).asRuntimeException();
    }

    static StatusRuntimeException invalid(String message) {
        return Status.INVALID_ARGUMENT.withDescription(message).asRuntimeException();
    }
}
