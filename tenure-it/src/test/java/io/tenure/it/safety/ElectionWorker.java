package io.tenure.it.safety;

import io.tenure.client.Lease;
import io.tenure.client.Leadership;
import io.tenure.it.safety.History.Pending;
import io.tenure.it.safety.Op.Kind;
import io.tenure.it.safety.Op.Outcome;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * The election side of a lock worker's process, on a thread of its own beside {@link LockWorker}
 * and {@link SemaphoreWorker}, with a lease of its own (an election has one leadership or
 * candidacy per lease). In one of the run's elections at a time: CAMPAIGN (wait to be elected),
 * WRITE the fenced resource as the leader ({@code LWRITE}, the leadership's token), pause 0-1.5 s
 * (the work of the leader), PROCLAIM a new value, WRITE again, END the holding at the resource,
 * RESIGN. Each step but the END is an {@link Op} (CAMPAIGN, LEAD_WRITE, PROCLAIM, RESIGN); the
 * resource logs the END among its decisions ({@code leaders.jsonl}).
 *
 * <p>As for the lock: the lease's validity is checked once, after the election; a pause of the
 * process (F5 stops it wherever this thread is) can depose the leader, and the resource must then
 * refuse its later write once a newer leader wrote. The END comes before the resignation, so that
 * by the resource's view the leadership is over before the server can elect the next candidate.
 */
final class ElectionWorker {
    static final long MAX_PAUSE_MILLIS = 1_500;

    private final WorkerContext ctx;
    private final TrackedLeases leases;
    private final ResourceClient resource;
    private final List<String> elections;

    ElectionWorker(WorkerContext ctx, TrackedLeases leases, List<String> elections) {
        this.ctx = ctx;
        this.leases = leases;
        this.resource = new ResourceClient(ctx.resourceEndpoint);
        this.elections = new ArrayList<>(elections);
    }

    void run() {
        ctx.cycleWithLease(leases, "election", lease -> cycle(lease, elections.get(ctx.random.nextInt(elections.size()))));
    }

    /** One campaign-write-pause-proclaim-write-end-resign; false when the lease should be given up. */
    private boolean cycle(Lease lease, String name) {
        Pending campaign = ctx.history.invoke(Kind.CAMPAIGN, name).leaseId(lease.id());
        Leadership leading;
        try {
            leading = ctx.client.election(name, lease).campaign(ctx.name + "/" + campaign.id(), ctx.ttl.multipliedBy(3));
        } catch (RuntimeException e) {
            Outcome outcome = WorkerContext.outcomeOf(e);
            campaign.complete(outcome, WorkerContext.describe(e));
            return outcome != Outcome.INFO;
        }
        long token = leading.fencingToken();
        campaign.token(token).position(token).ok();

        if (leading.isValid() && write(lease, name, token)) {
            WorkerContext.sleep(ctx.random.nextInt((int) MAX_PAUSE_MILLIS + 1)); // the leader's work (F5 may stop the process here)
            proclaim(lease, leading);
            write(lease, name, token);
        }
        resign(lease, leading);
        return true;
    }

    /** Whether the write was accepted. */
    private boolean write(Lease lease, String name, long token) {
        Pending write = ctx.history.invoke(Kind.LEAD_WRITE, name).leaseId(lease.id()).token(token);
        return WorkerContext.recordWrite(write, () -> resource.leaderWrite(name, token, ctx.name + "/" + write.id()));
    }

    /** A new value, named after the operation; its answer names the revision from which it holds. */
    private void proclaim(Lease lease, Leadership leading) {
        Pending proclaim = ctx.history.invoke(Kind.PROCLAIM, leading.name()).leaseId(lease.id()).token(leading.fencingToken());
        try {
            long revision = leading.proclaim(ctx.name + "/" + proclaim.id());
            proclaim.position(revision).ok();
        } catch (RuntimeException e) {
            proclaim.complete(WorkerContext.outcomeOf(e), WorkerContext.describe(e));
        }
    }

    /**
     * Ends the holding at the resource, then resigns on the server. As for a lock's release, a
     * resignation with a lost lease may not reach the server (the SDK then reports it done): INFO, not OK.
     */
    private void resign(Lease lease, Leadership leading) {
        Pending resign = ctx.history.invoke(Kind.RESIGN, leading.name()).leaseId(lease.id()).token(leading.fencingToken());
        try {
            resource.leaderEnd(leading.name(), leading.fencingToken(), ctx.name + "/" + resign.id());
        } catch (IOException e) {
            // The resource keeps counting the leadership until a newer leader's write displaces it: its view stays safe.
            System.err.println(ctx.name + ": could not end leadership " + leading.fencingToken() + " at the resource: " + e);
        }
        WorkerContext.recordRelease(resign, lease, leading::resign);
    }
}
