package io.tenure.server;

import java.time.Duration;

/**
 * Guards one member keeps against overload; each refusal names the limit. They protect the
 * member, not safety: a request over a limit is refused before anything is proposed.
 *
 * @param maxConnections      client connections (gRPC and HTTP each) accepted at once (10,000)
 * @param maxLeasesPerClient  live leases with the same client id (10,000)
 * @param maxLocksPerClient   locks held or waited for by the leases of one client id (10,000)
 * @param maxWaitersPerLock   leases queued for one lock (10,000)
 * @param maxRequestsPerSecond requests this member admits per second, keep-alives included; 0 = no guard (50,000)
 * @param maxHttpBodyBytes    the largest HTTP request body (128 KiB: 64 KiB of metadata, escaped)
 * @param shedAfter           how long new work may wait for the log before the member sheds new
 *                            requests with a retry hint ({@link Admission}; 200 ms)
 * @param maxLocksPerLease    locks, semaphores, elections and barriers held or waited for by one lease (10,000)
 * @param idleTime            how long a resource that keeps something when unused (a semaphore's
 *                            limit) stays with no holder and no waiter before the leader forgets it
 *                            (60 s, as seed 004's {@code --gc-max-idle}; 0: at the next sweep)
 * @param maxLeasesPerUser    live leases one user owns while authentication is on (10,000)
 * @param maxLocksPerUser     resources the leases of one user hold or wait for while authentication is on (10,000)
 * @param maxRequestsPerUser  requests one user makes per second on this member while authentication is on, keep-alives
 *                            not counted; 0 = no quota (0)
 */
public record ServerLimits(int maxConnections, int maxLeasesPerClient, int maxLocksPerClient, int maxWaitersPerLock,
                           int maxRequestsPerSecond, int maxHttpBodyBytes, Duration shedAfter, int maxLocksPerLease,
                           Duration idleTime, int maxLeasesPerUser, int maxLocksPerUser, int maxRequestsPerUser) {

    public static final int DEFAULT_MAX_LOCKS_PER_LEASE = 10_000;
    public static final Duration DEFAULT_IDLE_TIME = Duration.ofSeconds(60);
    public static final int DEFAULT_MAX_LEASES_PER_USER = 10_000;
    public static final int DEFAULT_MAX_LOCKS_PER_USER = 10_000;

    /** The limits before the per-user quotas existed, with their defaults. */
    public ServerLimits(int maxConnections, int maxLeasesPerClient, int maxLocksPerClient, int maxWaitersPerLock,
                        int maxRequestsPerSecond, int maxHttpBodyBytes, Duration shedAfter, int maxLocksPerLease, Duration idleTime) {
        this(maxConnections, maxLeasesPerClient, maxLocksPerClient, maxWaitersPerLock, maxRequestsPerSecond, maxHttpBodyBytes, shedAfter,
                maxLocksPerLease, idleTime, DEFAULT_MAX_LEASES_PER_USER, DEFAULT_MAX_LOCKS_PER_USER, 0);
    }

    /** The limits before {@code shedAfter} existed, with its default and the later ones'. */
    public ServerLimits(int maxConnections, int maxLeasesPerClient, int maxLocksPerClient, int maxWaitersPerLock,
                        int maxRequestsPerSecond, int maxHttpBodyBytes) {
        this(maxConnections, maxLeasesPerClient, maxLocksPerClient, maxWaitersPerLock, maxRequestsPerSecond, maxHttpBodyBytes,
                Admission.DEFAULT_SHED_AFTER);
    }

    /** The limits before the per-lease limit and the idle time existed, with their defaults. */
    public ServerLimits(int maxConnections, int maxLeasesPerClient, int maxLocksPerClient, int maxWaitersPerLock,
                        int maxRequestsPerSecond, int maxHttpBodyBytes, Duration shedAfter) {
        this(maxConnections, maxLeasesPerClient, maxLocksPerClient, maxWaitersPerLock, maxRequestsPerSecond, maxHttpBodyBytes,
                shedAfter, DEFAULT_MAX_LOCKS_PER_LEASE, DEFAULT_IDLE_TIME);
    }

    public static ServerLimits defaults() {
        return new ServerLimits(10_000, 10_000, 10_000, 10_000, 50_000, 128 * 1024, Admission.DEFAULT_SHED_AFTER,
                DEFAULT_MAX_LOCKS_PER_LEASE, DEFAULT_IDLE_TIME);
    }

    /** @throws IllegalArgumentException naming the first invalid limit */
    public ServerLimits validate() {
        positive("max connections", maxConnections);
        positive("max leases per client", maxLeasesPerClient);
        positive("max locks per client", maxLocksPerClient);
        positive("max waiters per lock", maxWaitersPerLock);
        positive("max locks per lease", maxLocksPerLease);
        positive("max leases per user", maxLeasesPerUser);
        positive("max locks per user", maxLocksPerUser);
        if (maxRequestsPerUser < 0) {
            throw new IllegalArgumentException("max requests per user must be 0 (no quota) or positive, got " + maxRequestsPerUser);
        }
        if (maxRequestsPerSecond < 0) {
            throw new IllegalArgumentException("max requests per second must be 0 (no guard) or positive, got " + maxRequestsPerSecond);
        }
        if (shedAfter == null || shedAfter.toMillis() < 10 || shedAfter.toMinutes() > 10) {
            throw new IllegalArgumentException("shed after must be between 10ms and 10m, got " + shedAfter);
        }
        if (maxHttpBodyBytes < 1024) {
            throw new IllegalArgumentException("max http body must be at least 1024 bytes, got " + maxHttpBodyBytes);
        }
        if (idleTime == null || idleTime.isNegative() || idleTime.toHours() > 24) {
            throw new IllegalArgumentException("idle time must be between 0s and 24h, got " + idleTime);
        }
        return this;
    }

    public ServerLimits withMaxConnections(int v) { return new ServerLimits(v, maxLeasesPerClient, maxLocksPerClient, maxWaitersPerLock, maxRequestsPerSecond, maxHttpBodyBytes, shedAfter, maxLocksPerLease, idleTime, maxLeasesPerUser, maxLocksPerUser, maxRequestsPerUser); }
    public ServerLimits withMaxLeasesPerClient(int v) { return new ServerLimits(maxConnections, v, maxLocksPerClient, maxWaitersPerLock, maxRequestsPerSecond, maxHttpBodyBytes, shedAfter, maxLocksPerLease, idleTime, maxLeasesPerUser, maxLocksPerUser, maxRequestsPerUser); }
    public ServerLimits withMaxLocksPerClient(int v) { return new ServerLimits(maxConnections, maxLeasesPerClient, v, maxWaitersPerLock, maxRequestsPerSecond, maxHttpBodyBytes, shedAfter, maxLocksPerLease, idleTime, maxLeasesPerUser, maxLocksPerUser, maxRequestsPerUser); }
    public ServerLimits withMaxWaitersPerLock(int v) { return new ServerLimits(maxConnections, maxLeasesPerClient, maxLocksPerClient, v, maxRequestsPerSecond, maxHttpBodyBytes, shedAfter, maxLocksPerLease, idleTime, maxLeasesPerUser, maxLocksPerUser, maxRequestsPerUser); }
    public ServerLimits withMaxRequestsPerSecond(int v) { return new ServerLimits(maxConnections, maxLeasesPerClient, maxLocksPerClient, maxWaitersPerLock, v, maxHttpBodyBytes, shedAfter, maxLocksPerLease, idleTime, maxLeasesPerUser, maxLocksPerUser, maxRequestsPerUser); }
    public ServerLimits withShedAfter(Duration v) { return new ServerLimits(maxConnections, maxLeasesPerClient, maxLocksPerClient, maxWaitersPerLock, maxRequestsPerSecond, maxHttpBodyBytes, v, maxLocksPerLease, idleTime, maxLeasesPerUser, maxLocksPerUser, maxRequestsPerUser); }
    public ServerLimits withMaxHttpBodyBytes(int v) { return new ServerLimits(maxConnections, maxLeasesPerClient, maxLocksPerClient, maxWaitersPerLock, maxRequestsPerSecond, v, shedAfter, maxLocksPerLease, idleTime, maxLeasesPerUser, maxLocksPerUser, maxRequestsPerUser); }
    public ServerLimits withMaxLocksPerLease(int v) { return new ServerLimits(maxConnections, maxLeasesPerClient, maxLocksPerClient, maxWaitersPerLock, maxRequestsPerSecond, maxHttpBodyBytes, shedAfter, v, idleTime, maxLeasesPerUser, maxLocksPerUser, maxRequestsPerUser); }
    public ServerLimits withMaxLeasesPerUser(int v) { return new ServerLimits(maxConnections, maxLeasesPerClient, maxLocksPerClient, maxWaitersPerLock, maxRequestsPerSecond, maxHttpBodyBytes, shedAfter, maxLocksPerLease, idleTime, v, maxLocksPerUser, maxRequestsPerUser); }
    public ServerLimits withMaxLocksPerUser(int v) { return new ServerLimits(maxConnections, maxLeasesPerClient, maxLocksPerClient, maxWaitersPerLock, maxRequestsPerSecond, maxHttpBodyBytes, shedAfter, maxLocksPerLease, idleTime, maxLeasesPerUser, v, maxRequestsPerUser); }
    public ServerLimits withMaxRequestsPerUser(int v) { return new ServerLimits(maxConnections, maxLeasesPerClient, maxLocksPerClient, maxWaitersPerLock, maxRequestsPerSecond, maxHttpBodyBytes, shedAfter, maxLocksPerLease, idleTime, maxLeasesPerUser, maxLocksPerUser, v); }
    public ServerLimits withIdleTime(Duration v) { return new ServerLimits(maxConnections, maxLeasesPerClient, maxLocksPerClient, maxWaitersPerLock, maxRequestsPerSecond, maxHttpBodyBytes, shedAfter, maxLocksPerLease, v, maxLeasesPerUser, maxLocksPerUser, maxRequestsPerUser); }

    private static void positive(String what, int value) {
        if (value < 1) {
            throw new IllegalArgumentException(what + " must be at least 1, got " + value);
        }
    }
}
