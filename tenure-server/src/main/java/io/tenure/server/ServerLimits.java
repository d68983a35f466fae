package io.tenure.server;

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
 */
public record ServerLimits(int maxConnections, int maxLeasesPerClient, int maxLocksPerClient, int maxWaitersPerLock,
                           int maxRequestsPerSecond, int maxHttpBodyBytes) {

    public static ServerLimits defaults() {
        return new ServerLimits(10_000, 10_000, 10_000, 10_000, 50_000, 128 * 1024);
    }

    /** @throws IllegalArgumentException naming the first invalid limit */
    public ServerLimits validate() {
        positive("max connections", maxConnections);
        positive("max leases per client", maxLeasesPerClient);
        positive("max locks per client", maxLocksPerClient);
        positive("max waiters per lock", maxWaitersPerLock);
        if (maxRequestsPerSecond < 0) {
            throw new IllegalArgumentException("max requests per second must be 0 (no guard) or positive, got " + maxRequestsPerSecond);
        }
        if (maxHttpBodyBytes < 1024) {
            throw new IllegalArgumentException("max http body must be at least 1024 bytes, got " + maxHttpBodyBytes);
        }
        return this;
    }

    public ServerLimits withMaxConnections(int v) { return new ServerLimits(v, maxLeasesPerClient, maxLocksPerClient, maxWaitersPerLock, maxRequestsPerSecond, maxHttpBodyBytes); }
    public ServerLimits withMaxLeasesPerClient(int v) { return new ServerLimits(maxConnections, v, maxLocksPerClient, maxWaitersPerLock, maxRequestsPerSecond, maxHttpBodyBytes); }
    public ServerLimits withMaxLocksPerClient(int v) { return new ServerLimits(maxConnections, maxLeasesPerClient, v, maxWaitersPerLock, maxRequestsPerSecond, maxHttpBodyBytes); }
    public ServerLimits withMaxWaitersPerLock(int v) { return new ServerLimits(maxConnections, maxLeasesPerClient, maxLocksPerClient, v, maxRequestsPerSecond, maxHttpBodyBytes); }
    public ServerLimits withMaxRequestsPerSecond(int v) { return new ServerLimits(maxConnections, maxLeasesPerClient, maxLocksPerClient, maxWaitersPerLock, v, maxHttpBodyBytes); }
    public ServerLimits withMaxHttpBodyBytes(int v) { return new ServerLimits(maxConnections, maxLeasesPerClient, maxLocksPerClient, maxWaitersPerLock, maxRequestsPerSecond, v); }

    private static void positive(String what, int value) {
        if (value < 1) {
            throw new IllegalArgumentException(what + " must be at least 1, got " + value);
        }
    }
}
