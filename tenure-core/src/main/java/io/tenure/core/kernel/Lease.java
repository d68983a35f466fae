package io.tenure.core.kernel;

/**
 * A live lease in the lease table. Everything a primitive grants or queues is bound to one; a
 * lease that ends releases all of it ({@link Primitive#leaseEnded}). Only the kernel changes it.
 */
public final class Lease {
    private final long id;
    private long ttlMillis;
    private final String clientId;
    private final String owner;
    private final long grantedAt;
    private long renewedAt;

    Lease(long id, long ttlMillis, String clientId, String owner, long grantedAt, long renewedAt) {
        this.id = id;
        this.ttlMillis = ttlMillis;
        this.clientId = clientId;
        this.owner = owner;
        this.grantedAt = grantedAt;
        this.renewedAt = renewedAt;
    }

    public long id() {
        return id;
    }

    public long ttlMillis() {
        return ttlMillis;
    }

    /** The client id it was granted to; empty when none was given. */
    public String clientId() {
        return clientId;
    }

    /** The user whose call granted it; empty when none ({@link LeaseGrant#owner}). */
    public String owner() {
        return owner;
    }

    /** The log position of its grant. */
    public long grantedAt() {
        return grantedAt;
    }

    /** The log position of its latest grant or renewal. */
    public long renewedAt() {
        return renewedAt;
    }

    void renewedAt(long position) {
        this.renewedAt = position;
    }

    void ttlMillis(long ttl) {
        this.ttlMillis = ttl;
    }
}
