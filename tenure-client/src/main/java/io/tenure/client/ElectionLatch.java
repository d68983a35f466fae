package io.tenure.client;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A standing candidacy, as Curator's LeaderLatch: {@link TenureElection#latch} campaigns at once
 * and tells its {@link LeadershipListener} when it leads and when it stops. When its lease is
 * lost while leading or campaigning, it tells the listener and campaigns again (with the
 * client's session lease, which is granted anew; with a lease of its own, it stops, since that
 * lease is gone). {@link #close()} resigns or withdraws, and stops.
 */
public final class ElectionLatch implements AutoCloseable {
    private final TenureElection election;
    private final byte[] value;
    private final LeadershipListener listener;
    private final AtomicReference<CompletableFuture<Leadership>> campaign = new AtomicReference<>();
    private volatile Leadership leadership;
    private volatile boolean closed;

    ElectionLatch(TenureElection election, byte[] value, LeadershipListener listener) {
        this.election = election;
        this.value = value;
        this.listener = listener;
    }

    void start() {
        if (closed) {
            return;
        }
        CompletableFuture<Leadership> next = election.campaignAsync(value);
        campaign.set(next);
        next.whenComplete((won, failure) -> {
            if (failure != null) {
                if (!closed && Futures.rethrowable(failure) instanceof LeaseLostException && election.usesSessionLease()) {
                    start(); // the session lease is granted anew: stand again
                }
                return;
            }
            if (closed) {
                won.resignAsync();
                return;
            }
            leadership = won;
            listener.isLeader(won);
            won.lease().lost().thenRun(() -> {
                if (leadership == won) {
                    leadership = null;
                    listener.notLeader();
                    if (election.usesSessionLease()) {
                        start();
                    }
                }
            });
        });
    }

    /** Whether this latch leads now (a hint: its lease may be lost at any moment; use the token). */
    public boolean hasLeadership() {
        Leadership held = leadership;
        return held != null && held.isValid();
    }

    /** The leadership while this latch leads. */
    public java.util.Optional<Leadership> leadership() {
        return java.util.Optional.ofNullable(leadership).filter(Leadership::isValid);
    }

    /** Resigns if leading, withdraws the candidacy otherwise, and stops campaigning. */
    @Override
    public void close() {
        closed = true;
        CompletableFuture<Leadership> pending = campaign.get();
        if (pending != null) {
            pending.cancel(false); // withdraws the candidacy on the server
        }
        Leadership held = leadership;
        leadership = null;
        if (held != null) {
            held.resign();
            listener.notLeader();
        }
    }
}
