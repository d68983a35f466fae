package io.tenure.it.safety;

import io.tenure.client.Lease;
import io.tenure.client.LeaseLostException;
import io.tenure.client.LimitExceededException;
import io.tenure.client.LockNotAcquiredException;
import io.tenure.client.NotElectedException;
import io.tenure.client.SemaphoreNotAcquiredException;
import io.tenure.client.TenureClient;
import io.tenure.client.UnavailableException;
import io.tenure.it.safety.History.Pending;
import io.tenure.it.safety.Op.Outcome;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletionException;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Predicate;

/** What every role of a {@link SafetyWorker} shares: its name, history, client, seeded random, the run's TTL and keys. */
final class WorkerContext {
    final String name;
    final History history;
    final TenureClient client;
    final Random random;
    final Duration ttl;
    final List<String> keys;
    final String resourceEndpoint;
    volatile boolean running = true;

    WorkerContext(String name, History history, TenureClient client, Random random, Duration ttl, List<String> keys,
                  String resourceEndpoint) {
        this.name = name;
        this.history = history;
        this.client = client;
        this.random = random;
        this.ttl = ttl;
        this.keys = keys;
        this.resourceEndpoint = resourceEndpoint;
    }

    /** Another worker of the same process (its own thread): the same name, history, client and run, another random. */
    WorkerContext withRandom(Random random) {
        return new WorkerContext(name, history, client, random, ttl, keys, resourceEndpoint);
    }

    /**
     * The loop of a worker that holds things with a lease of its own: grants one (backing off
     * while no member grants), runs {@code cycle} with it until the worker stops, and revokes it
     * and grants a new one when a cycle says to give it up (an acquire that ended
     * indeterminately: the server may still queue or grant the abandoned request, and revoking
     * frees whatever it gets) or it is no longer valid.
     */
    void cycleWithLease(TrackedLeases leases, String what, Predicate<Lease> cycle) {
        Lease lease = null;
        while (running) {
            if (lease == null || !lease.isValid()) {
                lease = leases.grant();
                if (lease == null) {
                    pace(200, 1_000); // back off while no member grants
                    continue;
                }
            }
            try {
                if (!cycle.test(lease)) {
                    leases.revoke(lease);
                    lease = null;
                }
            } catch (RuntimeException unexpected) {
                // Recorded as INFO when the process ends; the worker goes on with a new lease.
                System.err.println(name + ": unexpected failure in a " + what + " cycle");
                unexpected.printStackTrace();
                lease = null;
            }
            pace(20, 200);
        }
    }

    /** A request to the fenced resource that answers with its refusal, or null when it accepted. */
    interface ResourceRequest {
        String refusal() throws IOException;
    }

    /** Records {@code op} (a write) as the resource decided it: OK, FAIL with the refusal, INFO when no answer came; whether accepted. */
    static boolean recordWrite(Pending op, ResourceRequest request) {
        try {
            String refusal = request.refusal();
            if (refusal == null) {
                op.ok();
                return true;
            }
            op.fail(refusal);
        } catch (IOException e) {
            op.info(describe(e));
        }
        return false;
    }

    /**
     * Records a release made by {@code release}: a release with a lost lease may not reach the
     * server (the SDK then only logs, or reports it done): that is INFO, not OK.
     */
    static void recordRelease(Pending op, Lease lease, Runnable release) {
        boolean validBefore = lease.isValid();
        try {
            release.run();
            if (validBefore && lease.isValid()) {
                op.ok();
            } else {
                op.info("the lease was lost: the release may not have reached the server");
            }
        } catch (RuntimeException e) {
            op.complete(outcomeOf(e), describe(e));
        }
    }

    /** Think time between operations: a set duration drawn from the seeded random, not a wait for a condition. */
    void pace(long minMillis, long maxMillis) {
        sleep(minMillis + (maxMillis > minMillis ? random.nextInt((int) (maxMillis - minMillis + 1)) : 0));
    }

    /** A set duration of the workload (think time, work under a lock); parks again after an early wake-up. */
    static void sleep(long millis) {
        long until = System.nanoTime() + millis * 1_000_000;
        long left;
        while ((left = until - System.nanoTime()) > 0) {
            LockSupport.parkNanos(left);
        }
    }

    /**
     * How an operation that threw ended: FAIL when the server definitely refused it (a lock or
     * semaphore wait or a campaign that timed out, an unknown lease, a bad request, a limit, a
     * proclaim of a leadership that is over), INFO when it may have happened
     * (no member answered in time, the lease was lost while waiting, anything unexpected).
     */
    static Outcome outcomeOf(Throwable failure) {
        Throwable e = failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
        if (e instanceof UnavailableException || e instanceof LeaseLostException) {
            return Outcome.INFO;
        }
        if (e instanceof LockNotAcquiredException || e instanceof SemaphoreNotAcquiredException || e instanceof NotElectedException
                || e instanceof LimitExceededException
                || e instanceof io.tenure.client.NotFoundException || e instanceof io.tenure.client.InvalidArgumentException
                || e instanceof io.tenure.client.AlreadyExistsException || e instanceof io.tenure.client.FailedPreconditionException) {
            return Outcome.FAIL;
        }
        return Outcome.INFO; // another TenureException (a status the client cannot classify), or a local failure
    }

    static String describe(Throwable failure) {
        return failure.getClass().getSimpleName() + ": " + failure.getMessage();
    }
}
