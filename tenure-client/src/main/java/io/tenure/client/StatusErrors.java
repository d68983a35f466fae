package io.tenure.client;

import io.grpc.Status;

/** The one place where gRPC statuses become client exceptions. */
final class StatusErrors {
    private StatusErrors() {
    }

    /**
     * Maps a failed call to the client's exception for its status, keeping the server's text.
     *
     * @param endpoint the endpoint that answered, named in transport failures where it helps
     */
    static TenureException toException(Throwable failure, String endpoint) {
        if (failure instanceof TenureException tenure) {
            return tenure;
        }
        Status status = Status.fromThrowable(failure);
        String text = status.getDescription() != null ? status.getDescription() : status.getCode().name();
        if (status.getCause() != null && status.getCause().getMessage() != null) {
            // Transport failures say only "io exception"; the cause says what happened.
            text += " (" + status.getCause().getMessage() + ")";
        }
        return switch (status.getCode()) {
            case INVALID_ARGUMENT -> new InvalidArgumentException(text, failure);
            case NOT_FOUND -> new LeaseNotFoundException(text, failure);
            case FAILED_PRECONDITION -> new NotHolderException(text, failure);
            case UNAVAILABLE -> new UnavailableException(endpoint + " unavailable: " + text, failure);
            case DEADLINE_EXCEEDED -> new UnavailableException(endpoint + " did not answer in time: " + text, failure);
            default -> new TenureException(status.getCode() + " from " + endpoint + ": " + text, failure);
        };
    }

    /** True when another endpoint may succeed where this one failed. */
    static boolean worthFailover(Throwable failure) {
        return Status.fromThrowable(failure).getCode() == Status.Code.UNAVAILABLE;
    }
}
