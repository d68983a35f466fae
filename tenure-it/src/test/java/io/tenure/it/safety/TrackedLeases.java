package io.tenure.it.safety;

import io.tenure.client.Lease;
import io.tenure.client.LeaseLoss;
import io.tenure.it.safety.History.Pending;
import io.tenure.it.safety.Op.Kind;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Grants, watches and revokes a worker's leases, recording GRANT, KEEPALIVE, LEASE_LOST and REVOKE.
 *
 * <p>The SDK does not report each acknowledged keep-alive, but its {@link Lease#safeUntil()} is
 * the send time of the last acknowledged one plus its safe window and moves only then; polling it every
 * {@value #POLL_MILLIS} ms yields each acknowledgement: a KEEPALIVE whose {@code invokeNanos} is
 * that send time exactly and whose {@code completeNanos} is when the poll saw it (at most a poll
 * period after the acknowledgement arrived). No SDK change was needed.
 *
 * <p>LEASE_LOST is recorded when {@link Lease#lost()} completes with UNREACHABLE or EXPIRED
 * (not for the worker's own revokes), at that moment; its {@code error} reads
 * {@code REASON safeUntilNanos=N: message}.
 */
final class TrackedLeases implements AutoCloseable {
    static final long POLL_MILLIS = 20;

    private final WorkerContext ctx;
    /** Each live lease and the safeUntil last seen. */
    private final Map<Lease, Long> seen = new ConcurrentHashMap<>();
    private final ScheduledExecutorService poller = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "keepalive-poller");
        t.setDaemon(true);
        return t;
    });

    TrackedLeases(WorkerContext ctx) {
        this.ctx = ctx;
        poller.scheduleWithFixedDelay(this::poll, POLL_MILLIS, POLL_MILLIS, TimeUnit.MILLISECONDS);
    }

    /** Grants a lease with the run's TTL; null when that failed (recorded). */
    Lease grant() {
        Pending op = ctx.history.invoke(Kind.GRANT, null).ttlMillis(ctx.ttl.toMillis());
        try {
            Lease lease = ctx.client.grantLease(ctx.ttl, ctx.name);
            op.leaseId(lease.id()).ttlMillis(lease.ttl().toMillis()).ok();
            track(lease);
            return lease;
        } catch (RuntimeException e) {
            op.complete(WorkerContext.outcomeOf(e), WorkerContext.describe(e));
            return null;
        }
    }

    private void track(Lease lease) {
        seen.put(lease, lease.safeUntil());
        lease.lost().thenAccept(loss -> {
            long at = System.nanoTime();
            seen.remove(lease);
            if (loss.reason() == LeaseLoss.Reason.UNREACHABLE || loss.reason() == LeaseLoss.Reason.EXPIRED) {
                ctx.history.invokeAt(Kind.LEASE_LOST, null, at).leaseId(lease.id()).ttlMillis(lease.ttl().toMillis())
                        .complete(Op.Outcome.OK, loss.reason() + " safeUntilNanos=" + lease.safeUntil() + ": " + loss.message());
            }
        });
    }

    private void poll() {
        for (Map.Entry<Lease, Long> entry : seen.entrySet()) {
            Lease lease = entry.getKey();
            long safeUntil = lease.safeUntil();
            if (safeUntil != entry.getValue() && seen.replace(lease, entry.getValue(), safeUntil)) {
                long sentAt = safeUntil - lease.safeWindow().toNanos();
                ctx.history.invokeAt(Kind.KEEPALIVE, null, sentAt).leaseId(lease.id()).ttlMillis(lease.ttl().toMillis()).ok();
            }
        }
    }

    /** Revokes {@code lease}, recording REVOKE (INFO when no member answered). */
    void revoke(Lease lease) {
        Pending op = ctx.history.invoke(Kind.REVOKE, null).leaseId(lease.id());
        try {
            lease.revoke();
            op.ok();
        } catch (RuntimeException e) {
            op.complete(WorkerContext.outcomeOf(e), WorkerContext.describe(e));
        }
    }

    @Override
    public void close() {
        poller.shutdownNow();
    }
}
