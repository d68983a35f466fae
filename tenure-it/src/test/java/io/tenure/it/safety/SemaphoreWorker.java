package io.tenure.it.safety;

import io.tenure.client.Lease;
import io.tenure.client.SemaphorePermit;
import io.tenure.it.safety.History.Pending;
import io.tenure.it.safety.Op.Kind;
import io.tenure.it.safety.Op.Outcome;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The semaphore side of a lock worker's process, on a thread of its own beside {@link LockWorker}
 * and with a lease of its own (one grant per semaphore and lease; and the lock side revokes its
 * lease when an acquire ends indeterminately). On one of the run's semaphores at a time: acquire
 * 1 to limit permits, WRITE the fenced resource under the grant ({@code PWRITE}, its own token),
 * pause 0-1.5 s (the work under the permits), WRITE again, END the holding at the resource, then
 * release on the server. Each step but the END is an {@link Op} (SEM_ACQUIRE, SEM_WRITE,
 * SEM_RELEASE, {@code value} the permits); the resource logs the END among its decisions.
 *
 * <p>As for the lock: the lease's validity is checked once, after the grant; a pause of the
 * process (F5 aims at the lock side's critical section, and stops this thread wherever it is)
 * can make the second write stale, and the resource must then refuse it if newer grants took the
 * permits ({@link PermitFence}). The END comes before the release, so that from the resource's
 * view the holding is over before the server can hand the permits on.
 */
final class SemaphoreWorker {
    static final long MAX_PAUSE_MILLIS = 1_500;

    private final WorkerContext ctx;
    private final TrackedLeases leases;
    private final ResourceClient resource;
    private final List<Map.Entry<String, Integer>> semaphores;

    SemaphoreWorker(WorkerContext ctx, TrackedLeases leases, Map<String, Integer> semaphores) {
        this.ctx = ctx;
        this.leases = leases;
        this.resource = new ResourceClient(ctx.resourceEndpoint);
        this.semaphores = new ArrayList<>(new java.util.TreeMap<>(semaphores).entrySet());
    }

    void run() {
        ctx.cycleWithLease(leases, "semaphore", lease -> {
            Map.Entry<String, Integer> semaphore = semaphores.get(ctx.random.nextInt(semaphores.size()));
            return cycle(lease, semaphore.getKey(), semaphore.getValue());
        });
    }

    /** One acquire-write-pause-write-end-release; false when the lease should be given up. */
    private boolean cycle(Lease lease, String name, int limit) {
        int permits = 1 + ctx.random.nextInt(limit);
        Pending acquire = ctx.history.invoke(Kind.SEM_ACQUIRE, name).leaseId(lease.id()).value(permits);
        SemaphorePermit grant;
        try {
            grant = ctx.client.semaphore(name, limit, lease).acquire(permits, ctx.ttl.multipliedBy(3));
        } catch (RuntimeException e) {
            Outcome outcome = WorkerContext.outcomeOf(e);
            acquire.complete(outcome, WorkerContext.describe(e));
            return outcome != Outcome.INFO;
        }
        long token = grant.fencingToken();
        acquire.token(token).position(token).ok();

        if (grant.isValid() && write(lease, name, token, permits)) {
            WorkerContext.sleep(ctx.random.nextInt((int) MAX_PAUSE_MILLIS + 1)); // the work (F5 may stop the process here)
            write(lease, name, token, permits);
        }
        release(lease, grant);
        return true;
    }

    /** Whether the write was accepted. */
    private boolean write(Lease lease, String name, long token, int permits) {
        Pending write = ctx.history.invoke(Kind.SEM_WRITE, name).leaseId(lease.id()).token(token).value(permits);
        return WorkerContext.recordWrite(write, () -> resource.permitWrite(name, token, permits, ctx.name + "/" + write.id()));
    }

    /**
     * Ends the holding at the resource, then releases on the server. As for locks, a release with
     * a lost lease may not reach the server (the SDK then reports it done): INFO, not OK.
     */
    private void release(Lease lease, SemaphorePermit grant) {
        Pending release = ctx.history.invoke(Kind.SEM_RELEASE, grant.name()).leaseId(lease.id()).token(grant.fencingToken())
                .value(grant.permits());
        try {
            resource.permitEnd(grant.name(), grant.fencingToken(), grant.permits(), ctx.name + "/" + release.id());
        } catch (IOException e) {
            // The resource keeps counting the grant until a newer one displaces it: its view stays safe.
            System.err.println(ctx.name + ": could not end grant " + grant.fencingToken() + " at the resource: " + e);
        }
        WorkerContext.recordRelease(release, lease, grant::release);
    }
}
