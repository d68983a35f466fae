package io.tenure.server;

import java.io.IOException;

/** One running Tenure member: the Raft server, the state machine and the gRPC front end. */
public final class TenureServer implements AutoCloseable {
    /** Starts a member; returns once it serves clients. Throws with a clear message when the data directory is unusable. */
    public static TenureServer start(ServerConfig config) throws IOException {
        throw new UnsupportedOperationException("being written");
    }

    /** The bound client gRPC port (useful when the configured port was 0). */
    public int clientPort() { throw new UnsupportedOperationException(); }

    /** Blocks until the member has stopped (closed, or failed fatally). */
    public void awaitTermination() throws InterruptedException { throw new UnsupportedOperationException(); }

    /** Stops serving and closes the Raft server; idempotent. */
    @Override
    public void close() { }
}
