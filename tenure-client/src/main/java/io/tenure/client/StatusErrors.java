package io.tenure.client;

import io.grpc.Metadata;
import io.grpc.Status;
import io.tenure.proto.v1.ClusterServiceGrpc;
import io.tenure.proto.v1.BarrierServiceGrpc;
import io.tenure.proto.v1.DoubleBarrierServiceGrpc;
import io.tenure.proto.v1.ElectionServiceGrpc;
import io.tenure.proto.v1.KvServiceGrpc;
import io.tenure.proto.v1.LatchServiceGrpc;
import io.tenure.proto.v1.LockServiceGrpc;
import io.tenure.proto.v1.ScopeServiceGrpc;
import io.tenure.proto.v1.SemaphoreServiceGrpc;

/** The one place where gRPC statuses become client exceptions. */
final class StatusErrors {
    private StatusErrors() {
    }

    /** Maps a failed lock or lease call; see {@link #toException(Throwable, String, String)}. */
    static TenureException toException(Throwable failure, String endpoint) {
        return toException(failure, endpoint, null);
    }

    /**
     * Maps a failed call to the client's exception for its status, keeping the server's text.
     *
     * @param endpoint the endpoint that answered, named in transport failures where it helps
     * @param method   the full gRPC method name of the call ({@code service/Method}):
     *                 {@code NOT_FOUND} and {@code FAILED_PRECONDITION} mean a lease and a stale
     *                 holder ({@link NotHolderException}) for the lock service's calls on a grant
     *                 (Unlock, Downgrade) and a lease and a refused request for its acquires, a
     *                 member and a refused change for the cluster service, and a lease and a
     *                 refused request for the semaphore service; for the scope service a
     *                 lease, and a deadlock ({@link DeadlockException}), a stale release or another
     *                 refused request
     */
    static TenureException toException(Throwable failure, String endpoint, String method) {
        if (failure instanceof TenureException tenure) {
            return tenure;
        }
        String service = method == null ? null : method.substring(0, Math.max(0, method.indexOf('/')));
        // The cluster and auth services' NOT_FOUND is a member, user or role; FAILED_PRECONDITION a refused change.
        boolean cluster = ClusterServiceGrpc.SERVICE_NAME.equals(service) || io.tenure.proto.v1.AuthServiceGrpc.SERVICE_NAME.equals(service);
        // A semaphore's FAILED_PRECONDITION is more than a stale release: a limit or permits that
        // differ from the semaphore's, or a name that is a lock.
        boolean semaphore = SemaphoreServiceGrpc.SERVICE_NAME.equals(service);
        // A scope acquire that would close a cycle of waits is refused as "deadlock: ...".
        boolean scope = ScopeServiceGrpc.SERVICE_NAME.equals(service);
        // A lock acquire's FAILED_PRECONDITION is a refused request (the other mode held, a name
        // of another kind, a late copy), not a stale holder.
        boolean acquire = LockServiceGrpc.getLockMethod().getFullMethodName().equals(method)
                || LockServiceGrpc.getTryLockMethod().getFullMethodName().equals(method)
                || ElectionServiceGrpc.getCampaignMethod().getFullMethodName().equals(method)
                || BarrierServiceGrpc.getAwaitMethod().getFullMethodName().equals(method)
                || DoubleBarrierServiceGrpc.SERVICE_NAME.equals(service)
                || LatchServiceGrpc.SERVICE_NAME.equals(service)
                // The store's one FAILED_PRECONDITION: it holds as many keys as it may.
                || KvServiceGrpc.SERVICE_NAME.equals(service);
        Status status = Status.fromThrowable(failure);
        String text = status.getDescription() != null ? status.getDescription() : status.getCode().name();
        if (status.getCause() != null && status.getCause().getMessage() != null) {
            // Transport failures say only "io exception"; the cause says what happened.
            text += " (" + status.getCause().getMessage() + ")";
        }
        return switch (status.getCode()) {
            case INVALID_ARGUMENT -> new InvalidArgumentException(text, failure);
            case NOT_FOUND -> cluster ? new NotFoundException(text, failure) : new LeaseNotFoundException(text, failure);
            case FAILED_PRECONDITION -> scope && text.startsWith("deadlock")
                    ? new DeadlockException(text, failure)
                    : cluster || semaphore || scope || acquire
                    ? new FailedPreconditionException(text, failure)
                    : new NotHolderException(text, failure);
            case ALREADY_EXISTS -> new AlreadyExistsException(text, failure);
            case RESOURCE_EXHAUSTED -> new LimitExceededException(text, failure);
            case UNAVAILABLE -> new UnavailableException(endpoint + " unavailable: " + text, failure);
            case DEADLINE_EXCEEDED -> new UnavailableException(endpoint + " did not answer in time: " + text, failure);
            case UNAUTHENTICATED -> new UnauthenticatedException(text, failure);
            case PERMISSION_DENIED -> new PermissionDeniedException(text, failure);
            default -> new TenureException(status.getCode() + " from " + endpoint + ": " + text, failure);
        };
    }

    /**
     * True when another endpoint, or the same one a little later, may succeed where this attempt
     * failed: the member was not serving (not ready, no leader, shutting down) or the connection
     * to it broke, which gRPC reports as {@code UNAVAILABLE} too.
     */
    static boolean worthFailover(Throwable failure) {
        return Status.fromThrowable(failure).getCode() == Status.Code.UNAVAILABLE;
    }

    /**
     * The trailer of a request a member shed because it was behind ({@code RESOURCE_EXHAUSTED}):
     * after how many milliseconds a retry is worth making. Without it, {@code RESOURCE_EXHAUSTED}
     * is a limit a retry does not lift (too many leases for one client id, a full queue).
     */
    static final Metadata.Key<String> RETRY_AFTER_MS = Metadata.Key.of("tenure-retry-after-ms", Metadata.ASCII_STRING_MARSHALLER);

    /** The retry hint of a shed request, in milliseconds, or -1 when the failure is not one. */
    static long shedRetryAfterMillis(Throwable failure) {
        if (Status.fromThrowable(failure).getCode() != Status.Code.RESOURCE_EXHAUSTED) {
            return -1;
        }
        Metadata trailers = Status.trailersFromThrowable(failure);
        String hint = trailers == null ? null : trailers.get(RETRY_AFTER_MS);
        if (hint == null) {
            return -1;
        }
        try {
            return Math.max(0, Long.parseLong(hint));
        } catch (NumberFormatException malformed) {
            return -1;
        }
    }

    static boolean deadlineExceeded(Throwable failure) {
        return Status.fromThrowable(failure).getCode() == Status.Code.DEADLINE_EXCEEDED;
    }
}
