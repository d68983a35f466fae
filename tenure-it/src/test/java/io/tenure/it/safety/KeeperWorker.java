package io.tenure.it.safety;

import io.tenure.client.Lease;

/**
 * The lease-keeper role: keeps {@value #LEASES} leases alive (the SDK's keep-alives, recorded
 * as KEEPALIVE by {@link TrackedLeases}), grants a new one when one is lost, and now and then
 * revokes one and grants a replacement, so that grants, renewals, revokes and expiries of leases
 * that hold no lock run through the log beside the lock traffic.
 */
final class KeeperWorker {
    static final int LEASES = 2;

    private final WorkerContext ctx;
    private final TrackedLeases leases;

    KeeperWorker(WorkerContext ctx, TrackedLeases leases) {
        this.ctx = ctx;
        this.leases = leases;
    }

    void run() {
        Lease[] held = new Lease[LEASES];
        long nextRevoke = System.nanoTime() + rotationNanos();
        while (ctx.running) {
            try {
                keep(held);
                if (System.nanoTime() - nextRevoke >= 0) {
                    int victim = ctx.random.nextInt(LEASES);
                    if (held[victim] != null) {
                        leases.revoke(held[victim]);
                        held[victim] = null;
                    }
                    nextRevoke = System.nanoTime() + rotationNanos();
                }
            } catch (RuntimeException unexpected) {
                System.err.println(ctx.name + ": unexpected failure keeping leases");
                unexpected.printStackTrace();
            }
            ctx.pace(100, 300);
        }
    }

    private void keep(Lease[] held) {
        for (int i = 0; i < LEASES && ctx.running; i++) {
            if (held[i] == null || !held[i].isValid()) {
                held[i] = leases.grant();
            }
        }
    }

    /** One to three TTLs between revokes. */
    private long rotationNanos() {
        return ctx.ttl.toNanos() + (long) (ctx.random.nextDouble() * 2 * ctx.ttl.toNanos());
    }
}
