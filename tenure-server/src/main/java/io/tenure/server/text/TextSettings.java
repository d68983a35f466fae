package io.tenure.server.text;

import java.nio.file.Path;
import java.time.Duration;

/**
 * The text front end's settings: the port, and dflockd's server flags with dflockd's meanings and
 * defaults (its {@code --port} is {@code --text-port} here). Limits of 0 mean "no limit", as in dflockd.
 *
 * @param port                     the text port (6388; 0 picks a free one); {@link #OFF} turns the front end off
 * @param defaultLeaseTtl          the lease of a hold whose request names none, and what {@code n} without a TTL renews to (33 s)
 * @param maxLocks                 how many lock-like resources (locks, semaphores, read/write locks, elections) may exist before a
 *                                 text request for a new one is refused {@code error_max_locks} (1024)
 * @param maxKeys                  how many counters and keys may exist before a text request creating one is refused
 *                                 {@code error_max_keys} (0)
 * @param maxListLength            the longest list a text push may make, else {@code error_list_full} (0)
 * @param maxWaiters               how many waiters one resource may have before a text acquire is refused {@code error_max_waiters} (0)
 * @param maxSubscriptions         how many {@code listen}, {@code watch} and {@code observe} registrations one connection may hold (0)
 * @param readTimeout              how long a connection may stay silent while the member waits for its next line (23 s)
 * @param writeTimeout             how long a reply or push may take to leave before the connection is dropped (5 s)
 * @param autoReleaseOnDisconnect  whether a closed connection's holds are released at once (true) or left to their lease
 * @param authToken                the shared token the first request ({@code auth}) must give; null: no authentication
 * @param tlsCert                  PEM certificate chain of the text port; null: plain TCP
 * @param tlsKey                   PEM private key of {@code tlsCert}
 * @param leaseSweepInterval       dflockd's lease sweep period, accepted for its scripts; Tenure's leader ends leases
 *                                 on its own clock through the log (see the README)
 * @param gcInterval               dflockd's idle-resource sweep period, accepted likewise (Tenure forgets idle names after --idle-time)
 * @param gcMaxIdle                dflockd's idle age before a resource is forgotten, accepted likewise
 */
public record TextSettings(int port, Duration defaultLeaseTtl, int maxLocks, int maxKeys, int maxListLength, int maxWaiters,
                           int maxSubscriptions, Duration readTimeout, Duration writeTimeout, boolean autoReleaseOnDisconnect,
                           String authToken, Path tlsCert, Path tlsKey, Duration leaseSweepInterval, Duration gcInterval,
                           Duration gcMaxIdle) {

    /** The port value that turns the text front end off. */
    public static final int OFF = -1;
    public static final int DEFAULT_PORT = 6388;
    public static final Duration DEFAULT_LEASE_TTL = Duration.ofSeconds(33);
    public static final int DEFAULT_MAX_LOCKS = 1024;
    public static final Duration DEFAULT_READ_TIMEOUT = Duration.ofSeconds(23);
    public static final Duration DEFAULT_WRITE_TIMEOUT = Duration.ofSeconds(5);

    public static TextSettings defaults() {
        return new TextSettings(DEFAULT_PORT, DEFAULT_LEASE_TTL, DEFAULT_MAX_LOCKS, 0, 0, 0, 0, DEFAULT_READ_TIMEOUT,
                DEFAULT_WRITE_TIMEOUT, true, null, null, null, Duration.ofSeconds(1), Duration.ofSeconds(5), Duration.ofSeconds(60));
    }

    public boolean enabled() {
        return port != OFF;
    }

    public TextSettings withPort(int v) { return new TextSettings(v, defaultLeaseTtl, maxLocks, maxKeys, maxListLength, maxWaiters, maxSubscriptions, readTimeout, writeTimeout, autoReleaseOnDisconnect, authToken, tlsCert, tlsKey, leaseSweepInterval, gcInterval, gcMaxIdle); }
    public TextSettings withDefaultLeaseTtl(Duration v) { return new TextSettings(port, v, maxLocks, maxKeys, maxListLength, maxWaiters, maxSubscriptions, readTimeout, writeTimeout, autoReleaseOnDisconnect, authToken, tlsCert, tlsKey, leaseSweepInterval, gcInterval, gcMaxIdle); }
    public TextSettings withMaxLocks(int v) { return new TextSettings(port, defaultLeaseTtl, v, maxKeys, maxListLength, maxWaiters, maxSubscriptions, readTimeout, writeTimeout, autoReleaseOnDisconnect, authToken, tlsCert, tlsKey, leaseSweepInterval, gcInterval, gcMaxIdle); }
    public TextSettings withMaxKeys(int v) { return new TextSettings(port, defaultLeaseTtl, maxLocks, v, maxListLength, maxWaiters, maxSubscriptions, readTimeout, writeTimeout, autoReleaseOnDisconnect, authToken, tlsCert, tlsKey, leaseSweepInterval, gcInterval, gcMaxIdle); }
    public TextSettings withMaxListLength(int v) { return new TextSettings(port, defaultLeaseTtl, maxLocks, maxKeys, v, maxWaiters, maxSubscriptions, readTimeout, writeTimeout, autoReleaseOnDisconnect, authToken, tlsCert, tlsKey, leaseSweepInterval, gcInterval, gcMaxIdle); }
    public TextSettings withMaxWaiters(int v) { return new TextSettings(port, defaultLeaseTtl, maxLocks, maxKeys, maxListLength, v, maxSubscriptions, readTimeout, writeTimeout, autoReleaseOnDisconnect, authToken, tlsCert, tlsKey, leaseSweepInterval, gcInterval, gcMaxIdle); }
    public TextSettings withMaxSubscriptions(int v) { return new TextSettings(port, defaultLeaseTtl, maxLocks, maxKeys, maxListLength, maxWaiters, v, readTimeout, writeTimeout, autoReleaseOnDisconnect, authToken, tlsCert, tlsKey, leaseSweepInterval, gcInterval, gcMaxIdle); }
    public TextSettings withReadTimeout(Duration v) { return new TextSettings(port, defaultLeaseTtl, maxLocks, maxKeys, maxListLength, maxWaiters, maxSubscriptions, v, writeTimeout, autoReleaseOnDisconnect, authToken, tlsCert, tlsKey, leaseSweepInterval, gcInterval, gcMaxIdle); }
    public TextSettings withWriteTimeout(Duration v) { return new TextSettings(port, defaultLeaseTtl, maxLocks, maxKeys, maxListLength, maxWaiters, maxSubscriptions, readTimeout, v, autoReleaseOnDisconnect, authToken, tlsCert, tlsKey, leaseSweepInterval, gcInterval, gcMaxIdle); }
    public TextSettings withAutoReleaseOnDisconnect(boolean v) { return new TextSettings(port, defaultLeaseTtl, maxLocks, maxKeys, maxListLength, maxWaiters, maxSubscriptions, readTimeout, writeTimeout, v, authToken, tlsCert, tlsKey, leaseSweepInterval, gcInterval, gcMaxIdle); }
    public TextSettings withAuthToken(String v) { return new TextSettings(port, defaultLeaseTtl, maxLocks, maxKeys, maxListLength, maxWaiters, maxSubscriptions, readTimeout, writeTimeout, autoReleaseOnDisconnect, v, tlsCert, tlsKey, leaseSweepInterval, gcInterval, gcMaxIdle); }
    public TextSettings withTls(Path cert, Path key) { return new TextSettings(port, defaultLeaseTtl, maxLocks, maxKeys, maxListLength, maxWaiters, maxSubscriptions, readTimeout, writeTimeout, autoReleaseOnDisconnect, authToken, cert, key, leaseSweepInterval, gcInterval, gcMaxIdle); }
    public TextSettings withLeaseSweepInterval(Duration v) { return new TextSettings(port, defaultLeaseTtl, maxLocks, maxKeys, maxListLength, maxWaiters, maxSubscriptions, readTimeout, writeTimeout, autoReleaseOnDisconnect, authToken, tlsCert, tlsKey, v, gcInterval, gcMaxIdle); }
    public TextSettings withGcInterval(Duration v) { return new TextSettings(port, defaultLeaseTtl, maxLocks, maxKeys, maxListLength, maxWaiters, maxSubscriptions, readTimeout, writeTimeout, autoReleaseOnDisconnect, authToken, tlsCert, tlsKey, leaseSweepInterval, v, gcMaxIdle); }
    public TextSettings withGcMaxIdle(Duration v) { return new TextSettings(port, defaultLeaseTtl, maxLocks, maxKeys, maxListLength, maxWaiters, maxSubscriptions, readTimeout, writeTimeout, autoReleaseOnDisconnect, authToken, tlsCert, tlsKey, leaseSweepInterval, gcInterval, v); }

    /** @throws IllegalArgumentException naming the first invalid setting */
    public TextSettings validate() {
        if (port != OFF && (port < 0 || port > 65_535)) {
            throw new IllegalArgumentException("text port must be between 0 and 65535 or off, got " + port);
        }
        if (defaultLeaseTtl.toMillis() < 1_000 || defaultLeaseTtl.toHours() > 24) {
            throw new IllegalArgumentException("default lease ttl must be between 1s and 24h, got " + defaultLeaseTtl);
        }
        nonNegative("max locks", maxLocks);
        nonNegative("max keys", maxKeys);
        nonNegative("max list length", maxListLength);
        nonNegative("max waiters", maxWaiters);
        nonNegative("max subscriptions", maxSubscriptions);
        positive("read timeout", readTimeout);
        positive("write timeout", writeTimeout);
        positive("lease sweep interval", leaseSweepInterval);
        positive("gc interval", gcInterval);
        positive("gc max idle", gcMaxIdle);
        if (authToken != null && authToken.isEmpty()) {
            throw new IllegalArgumentException("auth token must not be empty");
        }
        if ((tlsCert == null) != (tlsKey == null)) {
            throw new IllegalArgumentException("tls cert and tls key go together: give both or neither");
        }
        return this;
    }

    private static void nonNegative(String name, int value) {
        if (value < 0) {
            throw new IllegalArgumentException(name + " must be 0 (no limit) or more, got " + value);
        }
    }

    private static void positive(String name, Duration value) {
        if (value.isNegative() || value.isZero()) {
            throw new IllegalArgumentException(name + " must be positive, got " + value);
        }
    }
}
