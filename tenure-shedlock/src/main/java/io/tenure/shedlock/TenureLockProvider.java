package io.tenure.shedlock;

import io.tenure.client.InvalidArgumentException;
import io.tenure.client.Lease;
import io.tenure.client.LockHandle;
import io.tenure.client.TenureClient;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.core.SimpleLock;

/**
 * ShedLock's {@link LockProvider} over Tenure locks: each {@code @SchedulerLock} name is a Tenure
 * lock (under an optional prefix), and each run that gets it holds it with a fencing token.
 *
 * <pre>{@code
 * @Bean
 * LockProvider lockProvider(TenureClient tenure) {
 *     return new TenureLockProvider(tenure, "shedlock/");
 * }
 *
 * @Scheduled(cron = "0 0 2 * * *")
 * @SchedulerLock(name = "nightly-report", lockAtMostFor = "30m", lockAtLeastFor = "1m")
 * void nightlyReport() {
 *     long token = TenureLockProvider.currentFencingToken().orElseThrow();
 *     reports.publish(build(), token);            // the storage refuses a token lower than it has seen
 * }
 * }</pre>
 *
 * <h2>How a run holds the lock</h2>
 * {@link #lock(LockConfiguration)} never waits, as ShedLock expects of a provider: it grants a
 * lease whose TTL is {@code lockAtMostFor} and that is <em>not</em> renewed
 * ({@link TenureClient#grantExpiringLease}), then tries the lock once with it. When another node
 * holds the lock it revokes the lease and answers {@link Optional#empty()}: ShedLock skips the run.
 *
 * <ul>
 *   <li><b>{@code lockAtMostFor}</b> is the lease's TTL. Nothing keeps the lease alive, so the
 *       lock ends {@code lockAtMostFor} after its grant even when the node dies, hangs or is cut
 *       off (counted on the leader's clock; a leader change in between can add at most a
 *       failover, as for any lease). A task still running then no longer holds the lock, and
 *       another node may start the job: that is ShedLock's contract. Its fencing token then tells
 *       the two runs apart, and the storage refuses the older one.</li>
 *   <li><b>{@code lockAtLeastFor}</b>: an unlock before {@code lockAtLeastFor} has passed since
 *       {@code lock()} was called does not release; the provider's timer revokes the lease at
 *       that moment, and until then other nodes cannot take the lock. Should the node die (or
 *       this provider be {@linkplain #close() closed}) before, the lease still ends at
 *       {@code lockAtMostFor}. Both moments are measured on this JVM's monotonic clock, from
 *       just before the grant was sent, so the lock is never held shorter than asked.</li>
 *   <li><b>The minimum TTL.</b> A Tenure member grants no lease shorter than its minimum TTL:
 *       1 s for a single member, 10 election timeouts for a cluster (5 s with the default
 *       election timeout). A {@code lockAtMostFor} below it is refused with an
 *       {@link IllegalArgumentException} naming {@code lockAtMostFor}, rather than rounded up:
 *       rounding would hold the lock longer than the job's author said a run may take. ShedLock
 *       reports the exception and the run does not happen.</li>
 *   <li><b>Unlock</b> revokes the lease, which releases the lock at once; when no member
 *       answers, the lock ends at {@code lockAtMostFor}. Unlocking twice throws
 *       {@link IllegalStateException}, as ShedLock's {@link SimpleLock} says.</li>
 *   <li><b>{@code extend}</b> is not supported (ShedLock's default: {@link
 *       UnsupportedOperationException}): a Tenure lease keeps the TTL it was granted with, so a
 *       lock cannot be given a new {@code lockAtMostFor}. This provider is therefore not an
 *       {@code ExtensibleLockProvider}, and ShedLock's {@code KeepAliveLockProvider} does not wrap it.</li>
 * </ul>
 *
 * <h2>The fencing token in the task</h2>
 * ShedLock runs the task on the thread that called {@code lock()}, between it and
 * {@code unlock()}; {@link #currentFencingToken()} reads the token of the innermost lock that
 * thread holds through any {@code TenureLockProvider}, and {@link #currentFencingToken(String)}
 * that of a named one (for nested locks). A {@link SimpleLock} this provider returns is a
 * {@link TenureSimpleLock}, which carries its token too. Pass it with every write the task makes
 * and have the storage refuse a token lower than the highest it accepted
 * ({@code io.tenure.client.fence.JdbcFenceGuard} does it inside a JDBC transaction): a run that
 * outlived its {@code lockAtMostFor} then cannot overwrite the work of the run after it.
 *
 * <h2>The client</h2>
 * The {@link TenureClient} is the caller's: this provider never closes it. Lock names are the
 * prefix followed by ShedLock's name, at most 1 KiB of UTF-8 together. The holder others see
 * ({@code tenure describe}, the dashboard) is the client's id, with the lock's ShedLock settings
 * as its metadata. Thread-safe; share one per client. {@link #close()} stops its timer.
 */
public final class TenureLockProvider implements LockProvider, AutoCloseable {
    /** The longest lock name Tenure takes, in bytes of UTF-8 (prefix included). */
    static final int MAX_NAME_BYTES = 1024;

    private final TenureClient client;
    private final String prefix;
    /** Revokes at lockAtLeastFor the leases of locks unlocked before it. */
    private final ScheduledExecutorService releases;

    /** A provider whose lock names are ShedLock's names as they are. */
    public TenureLockProvider(TenureClient client) {
        this(client, "");
    }

    /**
     * A provider whose lock names are {@code prefix} followed by ShedLock's name, such as
     * {@code "shedlock/"}: the jobs' locks then list together ({@code tenure locks shedlock/}).
     *
     * @param client the caller's client; not closed by this provider
     * @param prefix put before every name; may be empty
     * @throws IllegalArgumentException if {@code client} or {@code prefix} is null, or the prefix
     *                                  alone is longer than a lock name may be
     */
    public TenureLockProvider(TenureClient client, String prefix) {
        if (client == null) {
            throw new IllegalArgumentException("client must not be null");
        }
        if (prefix == null) {
            throw new IllegalArgumentException("prefix must not be null (use \"\" for none)");
        }
        if (prefix.getBytes(StandardCharsets.UTF_8).length >= MAX_NAME_BYTES) {
            throw new IllegalArgumentException("prefix must be shorter than " + MAX_NAME_BYTES
                    + " bytes of UTF-8 (a lock name is at most that, prefix included), got "
                    + prefix.getBytes(StandardCharsets.UTF_8).length);
        }
        this.client = client;
        this.prefix = prefix;
        ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1, runnable -> {
            Thread thread = new Thread(runnable, "tenure-shedlock-release");
            thread.setDaemon(true);
            return thread;
        });
        timer.setRemoveOnCancelPolicy(true);
        timer.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
        this.releases = timer;
    }

    /**
     * Takes the lock for one run if no other node holds it; never waits.
     *
     * @return the held lock, or empty when another holder has it
     * @throws IllegalArgumentException if the name is blank or too long with the prefix, or
     *                                  {@code lockAtMostFor} is below the member's minimum TTL
     *                                  (1 s at least) or above 24 h; the message names the field
     * @throws io.tenure.client.TenureException if no member could be reached (ShedLock reports it; the run does not happen)
     */
    @Override
    public Optional<SimpleLock> lock(LockConfiguration configuration) {
        if (configuration == null) {
            throw new IllegalArgumentException("lock configuration must not be null");
        }
        String key = keyOf(configuration.getName());
        Duration lockAtMostFor = checkLockAtMostFor(configuration);
        long startedAt = System.nanoTime(); // before the grant: lockAtLeastFor never ends early
        Lease lease = grant(configuration, lockAtMostFor);
        Optional<LockHandle> held;
        try {
            held = client.lock(key, lease).withMetadata(metadata(configuration)).tryAcquire();
        } catch (RuntimeException failure) {
            lease.revokeAsync().exceptionally(ignored -> null); // else it ends at its TTL
            throw failure;
        }
        if (held.isEmpty()) {
            lease.revokeAsync().exceptionally(ignored -> null);
            return Optional.empty();
        }
        return Optional.of(TenureSimpleLock.held(configuration, held.get(), startedAt, releases));
    }

    /**
     * The fencing token of the innermost lock the current thread holds through a
     * {@code TenureLockProvider} (the run's own lock, inside a {@code @SchedulerLock} task), or
     * empty outside a locked run. See the class comment for what to do with it.
     */
    public static OptionalLong currentFencingToken() {
        return TenureSimpleLock.innermost().map(lock -> OptionalLong.of(lock.fencingToken())).orElse(OptionalLong.empty());
    }

    /**
     * The fencing token of the lock ShedLock knows as {@code lockName} (without the prefix), if
     * the current thread holds it; for a locked task that runs another.
     */
    public static OptionalLong currentFencingToken(String lockName) {
        return TenureSimpleLock.heldByThisThread(lockName).map(lock -> OptionalLong.of(lock.fencingToken())).orElse(OptionalLong.empty());
    }

    /**
     * Stops the timer of delayed releases: a lock unlocked before its {@code lockAtLeastFor} and
     * not yet released ends at its {@code lockAtMostFor} instead. The client stays open.
     */
    @Override
    public void close() {
        releases.shutdownNow();
    }

    private String keyOf(String name) {
        if (name == null || name.isBlank()) {
            throw new IllegalArgumentException("the lock configuration's name must not be blank, got '" + name + "'");
        }
        String key = prefix + name;
        int bytes = key.getBytes(StandardCharsets.UTF_8).length;
        if (bytes > MAX_NAME_BYTES) {
            throw new IllegalArgumentException("the lock configuration's name '" + name + "' is " + bytes
                    + " bytes of UTF-8 with the prefix '" + prefix + "'; a Tenure lock name is at most " + MAX_NAME_BYTES);
        }
        return key;
    }

    private static Duration checkLockAtMostFor(LockConfiguration configuration) {
        Duration lockAtMostFor = configuration.getLockAtMostFor();
        if (lockAtMostFor.compareTo(Lease.MIN_TTL) < 0) {
            throw new IllegalArgumentException("lockAtMostFor of lock '" + configuration.getName() + "' is "
                    + lockAtMostFor.toMillis() + " ms, below the shortest lease a Tenure member grants ("
                    + Lease.MIN_TTL.toMillis() + " ms for a single member; a cluster's minimum is 10 election timeouts, "
                    + "5 s by default): raise lockAtMostFor");
        }
        if (lockAtMostFor.compareTo(Lease.MAX_TTL) > 0) {
            throw new IllegalArgumentException("lockAtMostFor of lock '" + configuration.getName() + "' is "
                    + lockAtMostFor + ", above the longest lease a Tenure member grants (" + Lease.MAX_TTL + ")");
        }
        return lockAtMostFor;
    }

    private Lease grant(LockConfiguration configuration, Duration lockAtMostFor) {
        try {
            return client.grantExpiringLease(lockAtMostFor, client.clientId());
        } catch (InvalidArgumentException refused) {
            // The member's own minimum TTL (a cluster's is higher than the client's bound).
            throw new IllegalArgumentException("lockAtMostFor of lock '" + configuration.getName() + "' ("
                    + lockAtMostFor.toMillis() + " ms) was refused as a lease TTL by the Tenure cluster: "
                    + refused.getMessage(), refused);
        }
    }

    private static String metadata(LockConfiguration configuration) {
        return "shedlock lockAtMostFor=" + configuration.getLockAtMostFor() + " lockAtLeastFor=" + configuration.getLockAtLeastFor()
                + " lockAtMostUntil=" + configuration.getLockAtMostUntil();
    }
}
