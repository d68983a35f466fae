package io.tenure.it.safety;

import io.tenure.client.Lease;
import io.tenure.client.LockHandle;
import io.tenure.it.safety.History.Pending;
import io.tenure.it.safety.Op.Kind;
import io.tenure.it.safety.Op.Outcome;
import java.io.IOException;

/**
 * The lock role: on one of the run's hot keys at a time, acquire with the worker's lease, READ
 * the fenced resource, pause 0-2 s (the work under the lock), WRITE the value plus one with the
 * lock's fencing token, release. Every step is an {@link Op}.
 *
 * <p>The lease's validity is checked once, right after the grant and before the READ, never
 * between the pause and the WRITE: that is the gap fencing exists for. A pause of the whole process
 * there (F5) makes the write stale, and the resource must refuse it. Without such a pause the
 * write comes at most 2 s after a check that left at least TTL/2 before the server may expire the
 * lease, so it is never stale for any other reason.
 *
 * <p>When an acquire ends indeterminately (no member answered, or the lease was lost while
 * waiting) the lease is revoked and a new one granted: the server may still queue or grant the
 * abandoned request, and revoking frees whatever it gets.
 */
final class LockWorker {
    static final long MAX_PAUSE_MILLIS = 2_000;

    private final WorkerContext ctx;
    private final TrackedLeases leases;
    private final ResourceClient resource;

    LockWorker(WorkerContext ctx, TrackedLeases leases) {
        this.ctx = ctx;
        this.leases = leases;
        this.resource = new ResourceClient(ctx.resourceEndpoint);
    }

    void run() {
        ctx.cycleWithLease(leases, "lock", lease -> cycle(lease, ctx.keys.get(ctx.random.nextInt(ctx.keys.size()))));
    }

    /** One acquire-read-pause-write-release; false when the lease should be given up. */
    private boolean cycle(Lease lease, String key) {
        Pending acquire = ctx.history.invoke(Kind.ACQUIRE, key).leaseId(lease.id());
        LockHandle handle;
        try {
            handle = ctx.client.lock(key, lease).acquire(ctx.ttl.multipliedBy(3));
        } catch (RuntimeException e) {
            Outcome outcome = WorkerContext.outcomeOf(e);
            acquire.complete(outcome, WorkerContext.describe(e));
            return outcome != Outcome.INFO;
        }
        long token = handle.fencingToken();
        acquire.token(token).position(token).ok();

        if (!handle.isValid()) {
            release(lease, handle); // the lease was lost while the grant came back: no protected work
            return true;
        }
        long pauseMillis = ctx.random.nextInt((int) MAX_PAUSE_MILLIS + 1);
        Pending read = ctx.history.invoke(Kind.READ, key).leaseId(lease.id()).token(token);
        ResourceClient.Read value;
        try {
            value = resource.read(key, ctx.name, token, lease.id(), pauseMillis);
            read.value(value.value()).ok();
        } catch (IOException e) {
            read.info(WorkerContext.describe(e));
            release(lease, handle);
            return true;
        }
        WorkerContext.sleep(pauseMillis); // the work under the lock (F5 pauses the process here)
        write(lease, key, token, value.value() + 1);
        release(lease, handle);
        return true;
    }

    private void write(Lease lease, String key, long token, long value) {
        Pending write = ctx.history.invoke(Kind.WRITE, key).leaseId(lease.id()).token(token).value(value);
        WorkerContext.recordWrite(write, () -> resource.write(key, token, value, ctx.name + "/" + write.id()));
    }

    /** A release with a lost lease may not reach the server (the SDK then only logs): that is INFO, not OK. */
    private void release(Lease lease, LockHandle handle) {
        Pending release = ctx.history.invoke(Kind.RELEASE, handle.key()).leaseId(lease.id()).token(handle.fencingToken());
        WorkerContext.recordRelease(release, lease, handle::release);
    }
}
