package io.tenure.it.safety;

import io.tenure.client.LeaseLostException;
import io.tenure.client.LimitExceededException;
import io.tenure.client.LockNotAcquiredException;
import io.tenure.client.TenureClient;
import io.tenure.client.UnavailableException;
import io.tenure.it.safety.Op.Outcome;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletionException;
import java.util.concurrent.locks.LockSupport;

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
     * How an operation that threw ended: FAIL when the server definitely refused it (a lock wait
     * that timed out, an unknown lease, a bad request, a limit), INFO when it may have happened
     * (no member answered in time, the lease was lost while waiting, anything unexpected).
     */
    static Outcome outcomeOf(Throwable failure) {
        Throwable e = failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
        if (e instanceof UnavailableException || e instanceof LeaseLostException) {
            return Outcome.INFO;
        }
        if (e instanceof LockNotAcquiredException || e instanceof LimitExceededException
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
