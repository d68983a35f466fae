package io.tenure.client;

/** Told of every {@link ConnectionState} change of a client's leases ({@link TenureClient#addConnectionStateListener}). */
@FunctionalInterface
public interface ConnectionStateListener {
    void stateChanged(Lease lease, ConnectionState state);
}
