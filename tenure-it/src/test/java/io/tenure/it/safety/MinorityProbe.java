package io.tenure.it.safety;

import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import io.tenure.proto.v1.DescribeRequest;
import io.tenure.proto.v1.DescribeResponse;
import io.tenure.proto.v1.LeaseGrantRequest;
import io.tenure.proto.v1.LeaseGrantResponse;
import io.tenure.proto.v1.LockServiceGrpc;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * Asks a member cut off from the majority for a linearizable read (Describe, which waits for a
 * read barrier) and a write (a lease grant), straight to it, each with a deadline. Both must be
 * refused: a minority that answered either could return stale state or lose an acknowledged write.
 */
final class MinorityProbe {
    static final String KEY = "safety/k1";

    private MinorityProbe() {
    }

    /**
     * One line for the nemesis log: starts with "refused" when both calls failed as a cut-off
     * member must (UNAVAILABLE, DEADLINE_EXCEEDED, or shed with a retry hint), with "SERVED" when either got any other
     * answer. The grant asks for {@code ttl}, a TTL the cluster accepts.
     */
    static String probe(io.tenure.it.Cluster cluster, String endpoint, Duration deadline, Duration ttl) {
        ManagedChannel channel = cluster.channel(endpoint);
        try {
            LockServiceGrpc.LockServiceBlockingStub stub = LockServiceGrpc.newBlockingStub(channel);
            String read;
            String write;
            boolean served = false;
            try {
                DescribeResponse r = stub.withDeadlineAfter(deadline.toMillis(), TimeUnit.MILLISECONDS)
                        .describe(DescribeRequest.newBuilder().setName(KEY).build());
                served = true;
                read = "read of " + KEY + " answered at revision " + r.getHeader().getRevision();
            } catch (StatusRuntimeException e) {
                served |= !cutOff(e);
                read = "read " + e.getStatus().getCode();
            }
            try {
                LeaseGrantResponse g = stub.withDeadlineAfter(deadline.toMillis(), TimeUnit.MILLISECONDS)
                        .leaseGrant(LeaseGrantRequest.newBuilder().setClientId("minority-probe").setTtlMs(ttl.toMillis()).build());
                served = true;
                write = "lease grant acknowledged (lease " + g.getId() + ")";
            } catch (StatusRuntimeException e) {
                served |= !cutOff(e);
                write = "write " + e.getStatus().getCode() + (cutOff(e) ? "" : " (" + e.getStatus().getDescription() + ")");
            }
            return (served ? NemesisEvent.SERVED + ": " : NemesisEvent.REFUSED + ": ") + read + ", " + write + " at " + endpoint;
        } finally {
            channel.shutdownNow();
        }
    }

    private static final io.grpc.Metadata.Key<String> RETRY_AFTER_MS =
            io.grpc.Metadata.Key.of("tenure-retry-after-ms", io.grpc.Metadata.ASCII_STRING_MARSHALLER);

    /**
     * Refused as a cut-off member must: unavailable, no answer in time, or shed before anything
     * was proposed (RESOURCE_EXHAUSTED with a retry hint: its log stopped committing, so its work
     * waits longer than the member admits new work for).
     */
    static boolean cutOff(StatusRuntimeException e) {
        return switch (e.getStatus().getCode()) {
            case UNAVAILABLE, DEADLINE_EXCEEDED -> true;
            case RESOURCE_EXHAUSTED -> e.getTrailers() != null && e.getTrailers().get(RETRY_AFTER_MS) != null;
            default -> false;
        };
    }
}
