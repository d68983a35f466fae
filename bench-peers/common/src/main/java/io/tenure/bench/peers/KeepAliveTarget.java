package io.tenure.bench.peers;

/** A peer with a lease API that W3 can load: many leases kept alive by the peer's own client. */
public interface KeepAliveTarget {

    /** Runs W3 with {@link Options#leases()} leases at {@link Options#ttl()}, prints its line, returns the exit status. */
    int runKeepAlives(Options options) throws Exception;
}
