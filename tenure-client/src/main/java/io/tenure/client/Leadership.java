package io.tenure.client;

import io.tenure.proto.v1.ElectionServiceGrpc;
import io.tenure.proto.v1.ProclaimRequest;
import io.tenure.proto.v1.ResignRequest;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;

/**
 * Leadership of an election, held by a lease: the election's name and the fencing token of this
 * leadership (send it with every write the leader makes; a resource fenced with it refuses a
 * leader that was deposed). Leadership lasts until {@link #resign()}, the lease's revocation, or
 * its expiry on the server, which may happen behind the client's back once the lease is
 * {@linkplain Lease#lost() lost}: stop leading when it is.
 */
public final class Leadership implements AutoCloseable {
    private final TenureElection election;
    private final long fencingToken;
    private final Lease lease;
    private volatile boolean resigned;
    /** The resignation sent to the server; a failed one is sent again by the next resign. Guarded by this. */
    private CompletableFuture<Void> resigning;

    Leadership(TenureElection election, long fencingToken, Lease lease) {
        this.election = election;
        this.fencingToken = fencingToken;
        this.lease = lease;
    }

    /** The election's name. */
    public String name() {
        return election.name();
    }

    /** The log position of this election: unique, and strictly increasing across the election's leaders. */
    public long fencingToken() {
        return fencingToken;
    }

    /** The lease that leads. */
    public Lease lease() {
        return lease;
    }

    /** True while not resigned and the lease is {@linkplain Lease#isValid() valid}: a hint, not a guarantee (send the token). */
    public boolean isValid() {
        return !resigned && lease.isValid();
    }

    /**
     * Announces a new value without a new election; observers see it. Returns the revision from
     * which it holds.
     *
     * @throws NotHolderException if this leadership is over (resigned, or its lease ended)
     */
    public long proclaim(byte[] value) {
        return Futures.await(proclaimAsync(value), "proclaim in election '" + name() + "'");
    }

    /** {@link #proclaim(byte[])} with UTF-8 text. */
    public long proclaim(String value) {
        return proclaim(value.getBytes(StandardCharsets.UTF_8));
    }

    /** The asynchronous form of {@link #proclaim(byte[])}. */
    public CompletableFuture<Long> proclaimAsync(byte[] value) {
        TenureElection.checkValue(value);
        if (resigned) {
            return CompletableFuture.failedFuture(new NotHolderException("leadership of election '" + name() + "' (token "
                    + fencingToken + ") was resigned", null));
        }
        ProclaimRequest request = ProclaimRequest.newBuilder().setName(name()).setLeaseId(lease.id()).setFencingToken(fencingToken)
                .setValue(com.google.protobuf.ByteString.copyFrom(value)).build();
        return election.client().call(ElectionServiceGrpc.getProclaimMethod(), request, null).thenApply(r -> r.getRevision());
    }

    /**
     * Steps down: the next candidate leads, or nobody. Idempotent; a server answer that this
     * leadership is already over (resigned, or its lease ended) is not an error.
     *
     * @throws UnavailableException if no member could be reached while the lease is valid; call again to retry
     */
    public void resign() {
        Futures.await(resignAsync(), "resign from election '" + name() + "'");
    }

    /** The asynchronous form of {@link #resign()}. */
    public CompletableFuture<Void> resignAsync() {
        resigned = true;
        synchronized (this) {
            if (resigning == null || resigning.isCompletedExceptionally()) {
                ResignRequest request = ResignRequest.newBuilder().setName(name()).setLeaseId(lease.id()).setFencingToken(fencingToken).build();
                resigning = election.client().call(ElectionServiceGrpc.getResignMethod(), request, null)
                        .<Void>thenApply(r -> null)
                        .exceptionally(failure -> {
                            RuntimeException cause = Futures.rethrowable(failure);
                            if (cause instanceof FailedPreconditionException || cause instanceof LeaseNotFoundException) {
                                return null; // over already
                            }
                            if (cause instanceof UnavailableException && !lease.isValid()) {
                                return null; // it ends with the lost lease
                            }
                            throw cause;
                        });
            }
            return resigning.copy();
        }
    }

    /** Same as {@link #resign()}. */
    @Override
    public void close() {
        resign();
    }

    @Override
    public String toString() {
        return "Leadership{name='" + name() + "', fencingToken=" + fencingToken + ", lease=" + lease.id() + ", valid=" + isValid() + "}";
    }
}
