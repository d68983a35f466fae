package io.tenure.it.safety;

import io.tenure.client.Lease;
import io.tenure.client.Scope;
import io.tenure.client.ScopeHandle;
import io.tenure.client.ScopeMode;
import io.tenure.client.ScopePart;
import io.tenure.it.safety.History.Pending;
import io.tenure.it.safety.Op.Kind;
import io.tenure.it.safety.Op.Outcome;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * The byte-range side of a lock worker's process (issue 21), on a thread of its own beside {@link
 * LockWorker} and with a lease of its own. On the run's inode, a 64 KiB file of 4 KiB pages (small,
 * so that the writers' ranges collide often): pick a range of 1-4 pages and a mode (exclusive
 * mostly, shared one time in five), hold it as a lock scope ({@code lockAll}, one part, so that a
 * worker never deadlocks), WRITE the whole range at the fenced resource with the grant's token
 * ({@code RWRITE}, the range as the token's scopes), pause 0-1.5 s (the work; F5 may stop the
 * process here), WRITE a random page of it, END the holding at the resource, then release on the
 * server. Each step but the END is an {@link Op} (RANGE_ACQUIRE, RANGE_WRITE, RANGE_RELEASE;
 * {@code key} the range, {@code value} 1 for exclusive, 0 for shared); the resource logs the END
 * among its decisions ({@link RangeHoldings}).
 *
 * <p>As for the semaphore side: the lease's validity is checked once, after the grant; a pause can
 * make the second write stale, and the resource must then refuse it if a newer conflicting grant
 * wrote. The END comes before the release, so that from the resource's view the holding is over
 * before the server can hand the range on.
 */
final class RangeWorker {
    static final long PAGE = 4096;
    static final int PAGES = 16; // a 64 KiB file
    static final int MAX_PAGES = 4;
    static final long MAX_PAUSE_MILLIS = 1_500;

    private final WorkerContext ctx;
    private final TrackedLeases leases;
    private final ResourceClient resource;
    private final long inode;

    RangeWorker(WorkerContext ctx, TrackedLeases leases, long inode) {
        this.ctx = ctx;
        this.leases = leases;
        this.resource = new ResourceClient(ctx.resourceEndpoint);
        this.inode = inode;
    }

    void run() {
        ctx.cycleWithLease(leases, "range", this::cycle);
    }

    /** The key of an op on {@code [start, end)}: {@code inode:start-end}. */
    static String key(long inode, long start, long end) {
        return inode + ":" + start + "-" + end;
    }

    /** One acquire-write-pause-write-end-release; false when the lease should be given up. */
    private boolean cycle(Lease lease) {
        int pages = 1 + ctx.random.nextInt(MAX_PAGES);
        long start = ctx.random.nextInt(PAGES - pages + 1) * PAGE;
        long end = start + pages * PAGE;
        ScopeMode mode = ctx.random.nextInt(5) == 0 ? ScopeMode.SHARED : ScopeMode.EXCLUSIVE;
        long modeValue = mode == ScopeMode.EXCLUSIVE ? 1 : 0;
        Pending acquire = ctx.history.invoke(Kind.RANGE_ACQUIRE, key(inode, start, end)).leaseId(lease.id()).value(modeValue);
        ScopeHandle grant;
        try {
            grant = ctx.client.lockAll(List.of(new ScopePart(Scope.byteRange(inode, start, end), mode)), lease,
                    ctx.ttl.multipliedBy(3), ctx.name.getBytes(StandardCharsets.UTF_8));
        } catch (RuntimeException e) {
            Outcome outcome = WorkerContext.outcomeOf(e);
            acquire.complete(outcome, WorkerContext.describe(e));
            return outcome != Outcome.INFO;
        }
        long token = grant.fencingToken();
        acquire.token(token).position(token).ok();

        String held = start + "-" + end;
        if (grant.isValid() && write(lease, start, end, mode, token, held)) {
            WorkerContext.sleep(ctx.random.nextInt((int) MAX_PAUSE_MILLIS + 1)); // the work (F5 may stop the process here)
            long page = start + ctx.random.nextInt(pages) * PAGE;
            write(lease, page, page + PAGE, mode, token, held);
        }
        release(lease, grant, start, end, mode, held);
        return true;
    }

    /** Whether the write of {@code [from, to)} was accepted. */
    private boolean write(Lease lease, long from, long to, ScopeMode mode, long token, String held) {
        Pending write = ctx.history.invoke(Kind.RANGE_WRITE, key(inode, from, to)).leaseId(lease.id()).token(token)
                .value(mode == ScopeMode.EXCLUSIVE ? 1 : 0);
        return WorkerContext.recordWrite(write, () -> resource.rangeWrite(inode, from, to, mode.name(), token, ctx.name + "/" + write.id(),
                held));
    }

    /** Ends the holding at the resource, then releases on the server (INFO, not OK, with a lost lease). */
    private void release(Lease lease, ScopeHandle grant, long start, long end, ScopeMode mode, String held) {
        Pending release = ctx.history.invoke(Kind.RANGE_RELEASE, key(inode, start, end)).leaseId(lease.id()).token(grant.fencingToken())
                .value(mode == ScopeMode.EXCLUSIVE ? 1 : 0);
        try {
            resource.rangeEnd(inode, start, end, mode.name(), grant.fencingToken(), ctx.name + "/" + release.id(), held);
        } catch (IOException e) {
            // The resource keeps the grant held until a newer conflicting one displaces it: its view stays safe.
            System.err.println(ctx.name + ": could not end range grant " + grant.fencingToken() + " at the resource: " + e);
        }
        WorkerContext.recordRelease(release, lease, grant::release);
    }
}
