package io.tenure.client;

import com.google.protobuf.ByteString;
import io.tenure.proto.v1.ByteRange;
import io.tenure.proto.v1.ScopeAcquireRequest;
import io.tenure.proto.v1.ScopeAcquireResponse;
import io.tenure.proto.v1.ScopeCancelRequest;
import io.tenure.proto.v1.ScopeDescribeRequest;
import io.tenure.proto.v1.ScopeDescribeResponse;
import io.tenure.proto.v1.ScopeReleaseRequest;
import io.tenure.proto.v1.ScopeServiceGrpc;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

/**
 * The calls of lock scopes over {@code ScopeService}, for {@link TenureClient}: an acquire as the
 * semaphore's (one request id for every attempt, the server bounding each attempt's wait, a
 * failed or cancelled wait withdrawn and a grant that won the race given back), the release, and
 * the reads. Sets are checked here before anything is sent.
 */
final class ScopeLocks {
    /**
     * The name under which a lease's scope waits are withdrawn ({@link TenureClient#withdraw}):
     * one for all of them, so that a new acquire of the lease waits until every withdrawal (and
     * the give-back of a grant that won the race) is answered. Sent earlier, a new acquire
     * overlapping a grant about to be given back would be refused as the lease waiting for itself.
     * A lock of this very name (a NUL first) would only wait for those withdrawals too: harmless.
     */
    private static final String WAITS = "\u0000scopes";

    private final TenureClient client;

    ScopeLocks(TenureClient client) {
        this.client = client;
    }

    /**
     * Acquires {@code parts} (checked with {@link ScopePart#checkSet}) for {@code lease}: {@code timeout}
     * null or negative waits until granted or the lease is lost, zero tries once.
     * {@code answers} as for {@link TenureClient#acquireAsync(String, Lease, Duration, byte[])}.
     */
    CompletableFuture<ScopeHandle> acquireAsync(List<ScopePart> parts, Lease lease, Duration timeout, byte[] metadata, Executor answers) {
        if (!lease.isValid()) {
            return CompletableFuture.failedFuture(lease.lostException());
        }
        CompletableFuture<Void> withdrawing = client.afterWithdrawal(WAITS, lease);
        if (withdrawing != null) {
            return Futures.thenCompose(withdrawing, done -> acquireAsync(parts, lease, timeout, metadata, answers),
                    handle -> handle.releaseAsync().exceptionally(f -> null));
        }
        long timeoutMs = timeout == null || timeout.isNegative() ? -1 : FailoverCall.ceilMillis(timeout);
        long requestId = client.nextAcquireRequest();
        ScopeAcquireRequest.Builder request = ScopeAcquireRequest.newBuilder()
                .setLeaseId(lease.id()).setTimeoutMs(timeoutMs).setRequestId(requestId)
                .setMetadata(metadata == null ? ByteString.EMPTY : ByteString.copyFrom(metadata));
        parts.forEach(part -> request.addScopes(wire(part)));
        // The server bounds each attempt's wait; the client's deadline only catches a member that
        // never answers, and ends the retries a request timeout after the wait.
        CompletableFuture<ScopeAcquireResponse> call = FailoverCall.wait(client.endpoints(), client.clock(), client.scheduler(),
                ScopeServiceGrpc.getAcquireMethod(), request.build(), timeoutMs,
                (r, remaining) -> r.toBuilder().setTimeoutMs(remaining).build(), client.requestTimeout(),
                () -> lease.isValid() ? null : lease.lostException(), answers).result();
        // A lost lease can never be granted anything useful: withdraw the wait at once.
        Runnable stopWatchingLease = lease.keeper().onLoss(loss -> call.cancel(false));
        CompletableFuture<ScopeHandle> result = call.handle((response, failure) -> {
            stopWatchingLease.run();
            if (call.isCancelled() && !lease.isValid()) {
                throw lease.lostException();
            }
            if (failure != null) {
                RuntimeException cause = Futures.rethrowable(failure);
                if (cause instanceof UnavailableException) {
                    // The wait may still be queued on a member that did not answer; withdrawn
                    // before the caller hears of the failure, so that its retry waits for it.
                    withdraw(parts, lease, requestId);
                }
                throw cause;
            }
            if (!response.getAcquired()) {
                throw new ScopeNotAcquiredException(parts, response.getBlockersList().stream().map(ScopeLocks::blocker).toList());
            }
            ScopeHandle handle = new ScopeHandle(parts, response.getFencingToken(), lease);
            if (!lease.isValid()) {
                // Free it now if the server still ties it to the lease; it goes with the lease otherwise.
                handle.releaseAsync().exceptionally(f -> null);
                throw lease.lostException();
            }
            return handle;
        });
        result.whenComplete((handle, failure) -> {
            if (result.isCancelled()) {
                call.cancel(false);
                withdraw(parts, lease, requestId); // registered before cancel() returns: the caller's next acquire waits for it
            }
        });
        return result;
    }

    /**
     * Gives up the wait of acquire {@code requestId} after its caller gave up (timeout, interrupt,
     * cancel) or no member answered: a member never withdraws a wait by itself when its call goes
     * away, since the same wait may be re-attached elsewhere. A grant that won the race is given
     * back. Best effort: if no member answers, the wait ends with the lease.
     */
    private void withdraw(List<ScopePart> parts, Lease lease, long requestId) {
        ScopeCancelRequest request = ScopeCancelRequest.newBuilder().setLeaseId(lease.id()).setRequestId(requestId).build();
        client.withdraw(WAITS, lease, () -> client.call(ScopeServiceGrpc.getCancelMethod(), request, null)
                .thenCompose(response -> response.getAcquired()
                        // Granted just before the withdrawal: nobody will use it, so give it back.
                        ? client.giveBack(new ScopeHandle(parts, response.getFencingToken(), lease)::releaseAsync, lease)
                        : CompletableFuture.<Void>completedFuture(null)));
    }

    CompletableFuture<Void> releaseOnServer(Lease lease, long fencingToken) {
        ScopeReleaseRequest request = ScopeReleaseRequest.newBuilder().setLeaseId(lease.id()).setFencingToken(fencingToken).build();
        return client.call(ScopeServiceGrpc.getReleaseMethod(), request, null).thenApply(response -> null);
    }

    CompletableFuture<ScopeDescription> describeAsync(Scope scope) {
        Objects.requireNonNull(scope, "scope");
        ScopeDescribeRequest request = ScopeDescribeRequest.newBuilder().setScope(wire(scope)).build();
        return client.call(ScopeServiceGrpc.getDescribeMethod(), request, null).thenApply(response -> described(scope, response));
    }

    /** Who would block {@code parts} (checked with {@link ScopePart#checkSet}) now; empty when they would be granted. */
    CompletableFuture<List<ScopeBlocker>> blockersAsync(List<ScopePart> parts) {
        ScopeDescribeRequest.Builder request = ScopeDescribeRequest.newBuilder().setScope(wire(parts.get(0).scope()));
        parts.forEach(part -> request.addBlocked(wire(part)));
        return client.call(ScopeServiceGrpc.getDescribeMethod(), request.build(), null)
                .thenApply(response -> response.getBlockersList().stream().map(ScopeLocks::blocker).toList());
    }

    static io.tenure.proto.v1.ScopePart wire(ScopePart part) {
        return io.tenure.proto.v1.ScopePart.newBuilder().setScope(wire(part.scope())).setMode(wire(part.mode())).build();
    }

    static io.tenure.proto.v1.Scope wire(Scope scope) {
        io.tenure.proto.v1.Scope.Builder wire = io.tenure.proto.v1.Scope.newBuilder();
        if (scope instanceof Scope.Named named) {
            wire.setName(named.name());
        } else if (scope instanceof Scope.Inode inode) {
            wire.setInode(inode.inode());
        } else if (scope instanceof Scope.Path path) {
            wire.setPath(path.path());
        } else if (scope instanceof Scope.ByteRange range) {
            wire.setRange(ByteRange.newBuilder().setInode(range.inode()).setStart(range.start()).setEnd(range.end()));
        } else {
            throw new IllegalArgumentException("unknown kind of scope: " + scope);
        }
        return wire.build();
    }

    static io.tenure.proto.v1.ScopeMode wire(ScopeMode mode) {
        return mode == ScopeMode.SHARED ? io.tenure.proto.v1.ScopeMode.SCOPE_MODE_SHARED : io.tenure.proto.v1.ScopeMode.SCOPE_MODE_EXCLUSIVE;
    }

    static ScopePart part(io.tenure.proto.v1.ScopePart wire) {
        return new ScopePart(scope(wire.getScope()),
                wire.getMode() == io.tenure.proto.v1.ScopeMode.SCOPE_MODE_SHARED ? ScopeMode.SHARED : ScopeMode.EXCLUSIVE);
    }

    static Scope scope(io.tenure.proto.v1.Scope wire) {
        switch (wire.getKindCase()) {
            case INODE:
                return Scope.inode(wire.getInode());
            case PATH:
                return Scope.path(wire.getPath());
            case RANGE:
                return Scope.byteRange(wire.getRange().getInode(), wire.getRange().getStart(), wire.getRange().getEnd());
            case NAME:
                return Scope.named(wire.getName());
            default:
                throw new TenureException("the server answered a scope of no kind: " + wire);
        }
    }

    private static ScopeBlocker blocker(io.tenure.proto.v1.ScopeBlocker wire) {
        return new ScopeBlocker(wire.getLeaseId(), wire.getClientId(), part(wire.getPart()), wire.getHolding(), wire.getFencingToken());
    }

    private static ScopeDescription described(Scope scope, ScopeDescribeResponse response) {
        return new ScopeDescription(scope,
                response.getHoldersList().stream().map(h -> new ScopeDescription.Holder(h.getLeaseId(), h.getClientId(), h.getFencingToken(),
                        h.getScopesList().stream().map(ScopeLocks::part).toList(), h.getMetadata().toByteArray())).toList(),
                response.getWaitersList().stream().map(w -> new ScopeDescription.Waiter(w.getLeaseId(), w.getClientId(), w.getJoinedAt(),
                        w.getScopesList().stream().map(ScopeLocks::part).toList())).toList(),
                response.getHeader().getRevision());
    }
}
