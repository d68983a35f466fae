package io.tenure.core.kernel;

import io.tenure.core.Limits;
import io.tenure.core.kernel.Result.Code;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.Map;

/**
 * The acquire requests of one grant-queue primitive that ended: the grant they led to was
 * released, or their wait withdrawn. A client names each acquire with a request id, the same on
 * every retry of it; a copy of an ended one that is applied late (a retry that was still being
 * forwarded to the leader when the client moved on) must not queue the lease again or grant it
 * anew for a caller that stopped waiting. The last {@value #CAPACITY} ends are remembered,
 * oldest forgotten first: a copy arrives within a retry's lifetime, seconds, and this many ends
 * take far longer. Part of the primitive's snapshot section.
 */
public final class EndedAcquires {
    /** How many ended acquire requests are remembered. */
    public static final int CAPACITY = 16_384;

    private record Ended(String key, long leaseId, long requestId) {}

    private final RetryMemo<Ended, Long> ended = new RetryMemo<>(CAPACITY);

    /** Lease {@code leaseId}'s acquire {@code requestId} of {@code key} ended now (request id 0 names none: nothing to remember). */
    public void ended(ApplyContext context, String key, long leaseId, long requestId) {
        if (requestId != 0) {
            ended.remember(new Ended(key, leaseId, requestId), context.position());
        }
    }

    /** The refusal of a late copy of an ended acquire, or null when the request did not end (or names none). */
    public Result.Rejected lateCopy(String kind, String key, long leaseId, long requestId) {
        Long endedAt = requestId == 0 ? null : ended.recall(new Ended(key, leaseId, requestId));
        if (endedAt == null) {
            return null;
        }
        return new Result.Rejected(Code.FAILED_PRECONDITION, "acquire request " + Long.toUnsignedString(requestId) + " of lease "
                + leaseId + " for " + kind + " '" + key + "' already ended at revision " + endedAt
                + " (its grant was released or its wait withdrawn); a late copy of it does not acquire again");
    }

    public int size() {
        return ended.size();
    }

    /** Oldest first: key, lease, request id, and the position it ended at. */
    public void write(DataOutputStream out) throws IOException {
        out.writeInt(ended.size());
        for (Map.Entry<Ended, Long> e : ended.entries().entrySet()) {
            Wire.writeString(out, e.getKey().key());
            out.writeLong(e.getKey().leaseId());
            out.writeLong(e.getKey().requestId());
            out.writeLong(e.getValue());
        }
    }

    public void read(DataInputStream in) throws IOException {
        int count = Wire.count(in, "ended acquire");
        for (int i = 0; i < count; i++) {
            Ended e = new Ended(Wire.readString(in, Limits.MAX_METADATA_BYTES), in.readLong(), in.readLong());
            ended.remember(e, in.readLong());
        }
    }
}
