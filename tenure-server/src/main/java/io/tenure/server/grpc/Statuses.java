package io.tenure.server.grpc;

import io.tenure.server.Causes;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.tenure.server.LimitExceeded;
import io.tenure.server.NotServingException;
import io.tenure.server.RequestRejected;

import java.util.concurrent.CancellationException;

/** The one table from Tenure's failures to gRPC statuses. */
final class Statuses {
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
