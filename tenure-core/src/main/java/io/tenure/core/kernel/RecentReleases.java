package io.tenure.core.kernel;

import io.tenure.core.Limits;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.Map;

/**
 * The grants of one exclusive primitive let go recently (a lock released, a leader resigned), by
 * fencing token: a retried release of a grant already let go, even once its lease is gone, is
 * answered again with the token of whom the grant went to next, instead of a refusal. A token is
 * unique across names (I2), so it keys the memo alone; the name and the lease must match too, so
 * another's claim on the token is still refused. The last {@code capacity} are remembered, oldest
 * forgotten first ({@link RetryMemo}). Part of the primitive's snapshot section.
 */
public final class RecentReleases {
    private record Release(String key, long leaseId, long nextToken) {}

    private final RetryMemo<Long, Release> releases;
    private final String what;

    /**
     * @param capacity how many releases are remembered
     * @param what     what one is called in a corrupt snapshot's message ("release", "resignation")
     */
    public RecentReleases(int capacity, String what) {
        this.releases = new RetryMemo<>(capacity);
        this.what = what;
    }

    /** Lease {@code leaseId} let go its grant of {@code key} with {@code token}; {@code nextToken} is the next holder's (0 = nobody's). */
    public void letGo(String key, long leaseId, long token, long nextToken) {
        releases.remember(token, new Release(key, leaseId, nextToken));
    }

    /**
     * The next holder's token answered when lease {@code leaseId} let go its grant of {@code key}
     * with {@code token}; null when no such release is remembered.
     */
    public Long nextAfter(String key, long leaseId, long token) {
        Release release = releases.recall(token);
        return release != null && release.key().equals(key) && release.leaseId() == leaseId ? release.nextToken() : null;
    }

    public int size() {
        return releases.size();
    }

    /** Oldest first: token, name, lease, next token. */
    public void write(DataOutputStream out) throws IOException {
        out.writeInt(releases.size());
        for (Map.Entry<Long, Release> e : releases.entries().entrySet()) {
            out.writeLong(e.getKey());
            Wire.writeString(out, e.getValue().key());
            out.writeLong(e.getValue().leaseId());
            out.writeLong(e.getValue().nextToken());
        }
    }

    public void read(DataInputStream in) throws IOException {
        int count = Wire.count(in, what);
        for (int i = 0; i < count; i++) {
            long token = in.readLong();
            String key = Wire.readString(in, Limits.MAX_METADATA_BYTES);
            long leaseId = in.readLong();
            releases.remember(token, new Release(key, leaseId, in.readLong()));
        }
    }
}
